"""DepthToSpace (DCR and CRD) and SpaceToDepth, as reshape-transpose-reshape."""

from __future__ import annotations

from onnxport import importer

from ._static import xp


@importer("DepthToSpace", since=28)
def depth_to_space(ctx, x, *, blocksize, mode):
    m = xp(x)
    n, c, h, w = x.shape
    b = blocksize
    if mode == "DCR":
        t = m.reshape(x, (n, b, b, c // (b * b), h, w))
        t = m.transpose(t, (0, 3, 4, 1, 5, 2))
    else:  # CRD
        t = m.reshape(x, (n, c // (b * b), b, b, h, w))
        t = m.transpose(t, (0, 1, 4, 2, 5, 3))
    return m.reshape(t, (n, c // (b * b), h * b, w * b))


@importer("SpaceToDepth", since=28)
def space_to_depth(ctx, x, *, blocksize, mode):
    m = xp(x)
    n, c, h, w = x.shape
    b = blocksize
    t = m.reshape(x, (n, c, h // b, b, w // b, b))
    t = m.transpose(t, (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4))
    return m.reshape(t, (n, c * b * b, h // b, w // b))
