"""TensorScatter (opset 24): writes an update into a fixed-size KV cache along its sequence axis,
at a per-batch write index, linearly or wrapping around (``mode="circular"``)."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext
from .slice_split import norm_axis


@importer("TensorScatter", since=24)
def tensor_scatter(ctx: NodeContext, past: torch.Tensor, update: torch.Tensor,
                   write_indices: torch.Tensor | None = None, *, axis: int, mode: str) -> torch.Tensor:
    """present = past with ``update`` written at ``write_indices[b] + s`` along ``axis``."""
    if mode not in ("linear", "circular"):
        raise ctx.error(f"unknown mode {mode!r} (expected 'linear' or 'circular')")
    rank = past.dim()
    a = norm_axis(ctx, axis, rank)
    if a == 0:
        raise ctx.error("axis cannot be the batch axis 0")
    if update.dim() != rank or any(update.shape[i] != past.shape[i] for i in range(rank) if i != a):
        raise ctx.error(f"update shape {tuple(update.shape)} does not match the cache shape "
                        f"{tuple(past.shape)} outside axis {a}")
    max_len, seq_len = past.shape[a], update.shape[a]
    if seq_len > max_len:
        raise ctx.error(f"update length {seq_len} exceeds the cache length {max_len} on axis {a}")
    batch = past.shape[0]
    start = (torch.zeros(batch, dtype=torch.int64, device=past.device) if write_indices is None
             else write_indices.reshape(-1).to(torch.int64))
    # positions[b, s]: where update step s of batch b lands on the cache's sequence axis
    positions = start.reshape(batch, 1) + torch.arange(seq_len, device=past.device).reshape(1, seq_len)
    if mode == "circular":
        positions = positions.remainder(max_len)
    # linear mode: write_indices + sequence_length must stay within the cache; scatter rejects
    # an index past it (no data-dependent check here, so the op stays traceable)
    # broadcast the index to the update's shape: batch on dim 0, steps on the sequence axis
    shape = [1] * rank
    shape[0], shape[a] = batch, seq_len
    index = positions.reshape(shape).expand(update.shape)
    return past.scatter(a, index, update.to(past.dtype))
