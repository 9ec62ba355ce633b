"""Softmax, LogSoftmax and Hardmax along one axis."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from onnxport import importer

from ...context import NodeContext


@importer("Softmax", since=13)
@importer("LogSoftmax", since=13)
def softmax(ctx: NodeContext, x: torch.Tensor, *, axis: int) -> torch.Tensor:
    """exp(x) / sum(exp(x)) along ``axis`` (LogSoftmax: its logarithm)."""
    fn = F.softmax if ctx.op_type == "Softmax" else F.log_softmax
    return fn(x, dim=axis)


@importer("Hardmax", since=13)
def hardmax(ctx: NodeContext, x: torch.Tensor, *, axis: int) -> torch.Tensor:
    """1 at the first maximum along ``axis``, 0 elsewhere."""
    if x.numel() == 0:
        return torch.zeros_like(x)
    idx = torch.argmax(x, dim=axis, keepdim=True)
    return torch.zeros_like(x).scatter_(axis, idx, torch.ones_like(idx, dtype=x.dtype))
