"""GridSample (``F.grid_sample``) and AffineGrid (``F.affine_grid``)."""

from __future__ import annotations

import torch.nn.functional as F

from onnxport import importer

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "GridSample": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5..8e-5)")},
}

_MODES = {"linear": "bilinear", "nearest": "nearest", "cubic": "bicubic"}


@importer("GridSample", since=22)
def grid_sample(ctx, x, grid, *, align_corners, mode, padding_mode):
    if x.dim() not in (4, 5):
        raise ctx.error(f"GridSample on rank {x.dim()} input: torch samples 2-D and 3-D grids only")
    if mode == "cubic" and x.dim() == 5:
        raise ctx.error("cubic GridSample on a 3-D grid: torch's bicubic sampling is 2-D only")
    return F.grid_sample(x, grid.to(x.dtype), mode=_MODES[mode], padding_mode=padding_mode,
                         align_corners=bool(align_corners))


@importer("AffineGrid", since=20)
def affine_grid(ctx, theta, size, *, align_corners):
    c = ctx.const(1)
    shape = [int(v) for v in (c if c is not None else size.detach().cpu().numpy()).reshape(-1)]
    return F.affine_grid(theta, shape, align_corners=bool(align_corners))
