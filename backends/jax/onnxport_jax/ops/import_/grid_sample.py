"""GridSample (N-D; nearest, linear, cubic; zeros, border, reflection padding) and AffineGrid."""

from __future__ import annotations

import itertools

import jax.numpy as jnp

from onnxport import importer
from onnxport.opmath.grid import affine_base, cubic_weights, sample_bounds, unnormalize

from ._static import ints

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "GridSample": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5..8e-5)")},
}


def _reflect(x, lo, hi):
    """Reflect coordinates by the nearer border until they lie in [lo, hi]."""
    rng = hi - lo
    if rng <= 0:
        return jnp.full_like(x, lo)
    below, above = lo - x, x - hi
    nb, na = jnp.floor(below / rng), jnp.floor(above / rng)
    rb, ra = below - nb * rng, above - na * rng
    fb = jnp.where(nb % 2 == 0, lo + rb, hi - rb)
    fa = jnp.where(na % 2 == 0, hi - ra, lo + ra)
    return jnp.where(x < lo, fb, jnp.where(x > hi, fa, x))


@importer("GridSample", since=22)
def grid_sample(ctx, x, grid, *, align_corners, mode, padding_mode):
    if mode not in ("nearest", "linear", "cubic"):
        raise ctx.error(f"unknown GridSample mode {mode!r}")
    dims = [int(d) for d in x.shape[2:]]
    nd = len(dims)
    g = grid.astype(x.dtype)
    taps = []  # per spatial dim: [(index, weight), ...]
    for i, size in enumerate(dims):
        v = g[..., nd - 1 - i]  # grid's last axis lists coordinates as (x, y, z): reversed dims
        v = unnormalize(v, size, align_corners)
        lo, hi = sample_bounds(size, align_corners)
        if mode == "nearest":
            v = jnp.round(v)
        if padding_mode == "border":
            v = jnp.where((v < lo) | (v > hi), jnp.clip(v, 0, size - 1), v)
        elif padding_mode == "reflection":
            v = _reflect(v, lo, hi)
        if mode == "nearest":
            taps.append([(v.astype(jnp.int32), None)])
            continue
        v0 = jnp.floor(v)
        t = v - v0
        v0 = v0.astype(jnp.int32)
        if mode == "linear":
            taps.append([(v0, 1 - t), (v0 + 1, t)])
        else:
            taps.append([(v0 + k - 1, w) for k, w in enumerate(cubic_weights(t))])
    n = jnp.arange(x.shape[0]).reshape((-1,) + (1,) * (g.ndim - 2))
    out = 0
    for combo in itertools.product(*taps):
        idx, valid, weight = [], None, None
        for i, (ix, w) in enumerate(combo):
            size = dims[i]
            ok = (ix >= 0) & (ix < size)
            if padding_mode == "zeros":
                valid = ok if valid is None else valid & ok
                ix = jnp.clip(ix, 0, size - 1)
            elif padding_mode == "border":
                ix = jnp.clip(ix, 0, size - 1)
            else:
                lo, hi = sample_bounds(size, align_corners)
                ix = jnp.clip(_reflect(ix.astype(x.dtype), lo, hi).astype(jnp.int32), 0, size - 1)
            idx.append(ix)
            if w is not None:
                weight = w if weight is None else weight * w
        vals = x[(n, slice(None), *idx)]  # [N, *out, C]
        vals = jnp.moveaxis(vals, -1, 1)
        if valid is not None:
            vals = jnp.where(valid[:, None], vals, jnp.zeros_like(vals))
        out = out + (vals if weight is None else vals * weight[:, None])
    return jnp.asarray(out).astype(x.dtype)


@importer("AffineGrid", since=20)
def affine_grid(ctx, theta, size, *, align_corners):
    """Sampling grid [N, *spatial, r] of theta @ (x, y[, z], 1) over normalized coordinates."""
    shape = ints(ctx, 1, size)
    n, spatial = shape[0], shape[2:]
    base = jnp.asarray(affine_base(spatial, align_corners), theta.dtype)
    grid = jnp.einsum("pk,nrk->npr", base, theta)
    return jnp.reshape(grid, (n, *spatial, len(spatial)))
