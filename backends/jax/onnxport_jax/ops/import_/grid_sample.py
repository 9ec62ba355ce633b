"""GridSample (N-D; nearest, linear, cubic; zeros, border, reflection padding) and AffineGrid."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np

from onnxport import importer

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


def _cubic(t, a=-0.75):
    t = jnp.abs(t)
    return [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]


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
        v = (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
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
            taps.append([(v0 + k - 1, w) for k, w in enumerate(_cubic(t))])
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
                lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
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
    axes = []
    for s in spatial:
        if align_corners:
            axes.append(np.linspace(-1.0, 1.0, s) if s > 1 else np.zeros(1))
        else:
            axes.append((np.arange(s) * 2.0 + 1.0) / s - 1.0)
    mesh = np.meshgrid(*axes, indexing="ij")  # per dim, [*spatial]
    coords = np.stack([*reversed(mesh), np.ones(mesh[0].shape)], axis=-1)  # (x, y[, z], 1)
    base = jnp.asarray(coords, theta.dtype).reshape(-1, len(spatial) + 1)
    grid = jnp.einsum("pk,nrk->npr", base, theta)
    return jnp.reshape(grid, (n, *spatial, len(spatial)))
