"""Padding helpers shared by Conv, ConvTranspose and the pooling ops."""

from __future__ import annotations

from onnxport.opmath.pads import explicit_pads, same_pads

__all__ = ["explicit_pads", "same_pads", "split_pads"]


def split_pads(pads, nd: int):
    """ONNX pads -> (symmetric per-dim padding, extra F.pad list or None)."""
    begins, ends = pads[:nd], pads[nd:]
    if begins == ends:
        return list(begins), None
    pre = []
    for b, e in zip(reversed(begins), reversed(ends)):
        pre.extend([b, e])
    return [0] * nd, pre
