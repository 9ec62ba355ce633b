"""DepthToSpace (DCR and CRD) and SpaceToDepth: channel blocks <-> spatial blocks."""

from __future__ import annotations

import torch

from onnxport import importer


@importer("DepthToSpace", since=28)
def depth_to_space(ctx, x: torch.Tensor, *, blocksize: int, mode: str) -> torch.Tensor:
    if x.dim() != 4:
        raise ctx.error(f"input must be 4-D (N, C, H, W), got shape {list(x.shape)}")
    n, c, h, w = x.shape
    b = blocksize
    if c % (b * b):
        raise ctx.error(f"channels {c} are not divisible by blocksize^2 = {b * b}")
    if mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    else:
        raise ctx.error(f"unknown mode {mode!r} (expected 'DCR' or 'CRD')")
    return y.reshape(n, c // (b * b), h * b, w * b)


@importer("SpaceToDepth", since=28)
def space_to_depth(ctx, x: torch.Tensor, *, blocksize: int, mode: str) -> torch.Tensor:
    if x.dim() != 4:
        raise ctx.error(f"input must be 4-D (N, C, H, W), got shape {list(x.shape)}")
    n, c, h, w = x.shape
    b = blocksize
    if h % b or w % b:
        raise ctx.error(f"spatial size {h}x{w} is not divisible by blocksize {b}")
    y = x.reshape(n, c, h // b, b, w // b, b)
    if mode == "DCR":
        y = y.permute(0, 3, 5, 1, 2, 4)
    elif mode == "CRD":
        y = y.permute(0, 1, 3, 5, 2, 4)
    else:
        raise ctx.error(f"unknown mode {mode!r} (expected 'DCR' or 'CRD')")
    return y.reshape(n, c * b * b, h // b, w // b)
