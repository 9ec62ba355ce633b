"""Gather on a constant float table -> ``nn.Embedding`` (the module builder of ``Gather``).

The Gather primitive itself lives in ``indexing.py``; this file attaches its native-layer choice.
Discovery imports every module of the package before it registers anything, so the builder is in
place when ``indexing.gather`` is registered.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._modules import bind
from .indexing import gather


class OnnxEmbedding(nn.Embedding):
    """``nn.Embedding`` that also takes ONNX's negative indices (counted from the end)."""

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        idx = indices.to(torch.int64)
        idx = torch.where(idx < 0, idx + self.num_embeddings, idx)
        return F.embedding(idx, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)


@gather.module_builder
def gather_embedding(ctx, *, axis: int) -> tuple[nn.Module, list[int]] | None:
    """An embedding lookup: a 2-D float initializer gathered on axis 0 by runtime indices."""
    if axis not in (0, -2) or not ctx.is_initializer(0) or ctx.const(1) is not None:
        return None
    table = ctx.param(0)
    if table.dim() != 2 or not table.is_floating_point():
        return None
    # built around the table itself: nn.Embedding's random initialisation (which, even on the meta
    # device, loads torch's compiler) never runs
    m = OnnxEmbedding(table.shape[0], table.shape[1], _weight=table.detach(), _freeze=True)
    bind(m, "weight", table)
    return m, [1]
