"""SwiGLU (opset 28): the gated activation Swish_alpha(A) * B of gated feed-forward layers."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext


@importer("SwiGLU", since=28)
def swiglu(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """A * sigmoid(alpha * A) * B; A and B share one shape (no broadcasting)."""
    if a.shape != b.shape:
        raise ctx.error(f"SwiGLU needs A and B of one shape (no broadcasting), got "
                        f"{tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise ctx.error(f"SwiGLU needs A and B of one type, got {a.dtype} and {b.dtype}")
    return a * torch.sigmoid(alpha * a) * b
