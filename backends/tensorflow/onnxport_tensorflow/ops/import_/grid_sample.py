"""GridSample (N-D; nearest, linear, cubic; zeros, border, reflection padding) and AffineGrid."""

from __future__ import annotations

import itertools

import tensorflow as tf

from onnxport import importer
from onnxport.opmath.grid import affine_base, cubic_weights, sample_bounds, unnormalize

from ._static import ints, tensor

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "GridSample": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5.6e-5)")},
}


def _reflect(x, lo, hi):
    """Reflect coordinates by the nearer border until they lie in [lo, hi]."""
    rng = hi - lo
    if rng <= 0:
        return tf.fill(tf.shape(x), tf.constant(lo, x.dtype))
    below, above = lo - x, x - hi
    nb, na = tf.floor(below / rng), tf.floor(above / rng)
    rb, ra = below - nb * rng, above - na * rng
    fb = tf.where(tf.math.floormod(nb, 2) == 0, lo + rb, hi - rb)
    fa = tf.where(tf.math.floormod(na, 2) == 0, hi - ra, lo + ra)
    return tf.where(x < lo, fb, tf.where(x > hi, fa, x))


@importer("GridSample", since=22)
def grid_sample(ctx, x, grid, *, align_corners, mode, padding_mode):
    if mode not in ("nearest", "linear", "cubic"):
        raise ctx.error(f"unknown GridSample mode {mode!r}")
    x = tensor(x)
    dims = [int(d) for d in x.shape[2:]]
    nd = len(dims)
    g = tf.cast(grid, x.dtype)
    taps = []  # per spatial dim: [(index, weight), ...]
    for i, size in enumerate(dims):
        v = g[..., nd - 1 - i]  # grid's last axis lists coordinates as (x, y, z): reversed dims
        v = unnormalize(v, size, align_corners)
        lo, hi = sample_bounds(size, align_corners)
        if mode == "nearest":
            v = tf.round(v)
        if padding_mode == "border":
            v = tf.where((v < lo) | (v > hi), tf.clip_by_value(v, 0.0, size - 1.0), v)
        elif padding_mode == "reflection":
            v = _reflect(v, lo, hi)
        if mode == "nearest":
            taps.append([(tf.cast(v, tf.int32), None)])
            continue
        v0 = tf.floor(v)
        t = v - v0
        v0 = tf.cast(v0, tf.int32)
        if mode == "linear":
            taps.append([(v0, 1 - t), (v0 + 1, t)])
        else:
            taps.append([(v0 + k - 1, w) for k, w in enumerate(cubic_weights(t))])
    xl = tf.transpose(x, [0, *range(2, nd + 2), 1])  # [N, *spatial, C]
    batch = tf.shape(g)[0]
    n = tf.broadcast_to(tf.reshape(tf.range(batch), [-1] + [1] * (len(g.shape) - 2)), tf.shape(g)[:-1])
    out = 0
    for combo in itertools.product(*taps):
        idx, valid, weight = [n], None, None
        for i, (ix, w) in enumerate(combo):
            size = dims[i]
            ok = (ix >= 0) & (ix < size)
            if padding_mode == "zeros":
                valid = ok if valid is None else valid & ok
                ix = tf.clip_by_value(ix, 0, size - 1)
            elif padding_mode == "border":
                ix = tf.clip_by_value(ix, 0, size - 1)
            else:
                lo, hi = sample_bounds(size, align_corners)
                ix = tf.clip_by_value(tf.cast(_reflect(tf.cast(ix, x.dtype), lo, hi), tf.int32), 0, size - 1)
            idx.append(ix)
            if w is not None:
                weight = w if weight is None else weight * w
        vals = tf.gather_nd(xl, tf.stack(idx, axis=-1))  # [N, *out, C]
        if valid is not None:
            vals = tf.where(valid[..., None], vals, tf.zeros_like(vals))
        out = out + (vals if weight is None else vals * weight[..., None])
    r = len(out.shape)
    return tf.transpose(out, [0, r - 1, *range(1, r - 1)])


@importer("AffineGrid", since=20)
def affine_grid(ctx, theta, size, *, align_corners):
    """Sampling grid [N, *spatial, r] of theta @ (x, y[, z], 1) over normalized coordinates."""
    shape = ints(ctx, 1, size)
    n, spatial = shape[0], shape[2:]
    theta = tensor(theta)
    base = tf.constant(affine_base(spatial, align_corners), theta.dtype)
    grid = tf.einsum("pk,nrk->npr", base, theta)
    return tf.reshape(grid, [n, *spatial, len(spatial)])
