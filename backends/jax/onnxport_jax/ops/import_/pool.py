"""MaxPool (with ONNX argmax indices), AveragePool, LpPool, the Global forms and MaxUnpool.

Pooling runs over an explicitly padded input, as an elementwise max/sum of the kernel's strided
slices when the kernel is small (one fused loop; XLA:CPU's ``reduce_window`` is ~3x slower) and on
``lax.reduce_window`` otherwise; ceil-mode windows that run past the padding see the reduction's
identity. MaxPool indices use an explicit window gather.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer
from onnxport.opmath.pads import average_pool_counts, pool_settings

from ._padding import spatial_settings, window_taps
from ._static import ints

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "AveragePool": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5..8e-5)")},
}


def _spatial(x, cl=False):
    """The spatial dims of ``x``: NC... (ONNX), or N...C with ``cl`` (channels last)."""
    return [int(s) for s in (x.shape[1:-1] if cl else x.shape[2:])]


def _settings(x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode, cl=False):
    """Kernel, strides, dilations, begin pads, end pads, ceil-mode extra end pads, out sizes."""
    return pool_settings(_spatial(x, cl), kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)


#: kernels up to this many taps pool as strided slices
_MAX_TAPS = 64


def _reduce(x, init, op, kernel, strides, dilations, pads, cl=False):
    nd = len(kernel)
    if 1 < math.prod(kernel) <= _MAX_TAPS:
        return _reduce_taps(x, init, op, kernel, strides, dilations, pads, cl)

    def full(spatial):  # a window setting over all dims
        return (1, *spatial, 1) if cl else (1, 1, *spatial)

    padding = [(0, 0), *pads[:nd], (0, 0)] if cl else [(0, 0), (0, 0), *pads[:nd]]
    return lax.reduce_window(x, init, op, full(kernel), full(strides), padding,
                             window_dilation=full(dilations))


def _reduce_taps(x, init, op, kernel, strides, dilations, pads, cl=False):
    """:func:`_reduce` as ``op`` folded over one strided slice of the padded input per kernel tap."""
    nd = len(kernel)
    a0 = 1 if cl else 2  # first spatial axis
    cfg = [(0, 0, 0)] * x.ndim
    for i in range(nd):
        cfg[a0 + i] = (pads[i][0], pads[i][1], 0)
    xp = lax.pad(x, jnp.asarray(init, x.dtype), cfg)
    y = None
    for _, sl in window_taps(xp, kernel, strides, dilations, a0):
        y = sl if y is None else op(y, sl)
    return y


def _lowest(dtype):
    return -np.inf if jnp.issubdtype(dtype, jnp.floating) else np.iinfo(dtype).min


def max_pool_values(x, *, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, cl=False, **_):
    """MaxPool's values (``cl``: ``x`` and the result channels last)."""
    kernel, strides, dilations, begins, ends, extra, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode, cl)
    low = np.array(_lowest(x.dtype), x.dtype)  # numpy: lax picks the differentiable max-window op
    padcfg = [(b, e + x_) for b, e, x_ in zip(begins, ends, extra)]
    return _reduce(x, low, lax.max, kernel, strides, dilations, padcfg, cl)


@importer("MaxPool", since=22)
def max_pool(ctx, x, *, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides):
    """Max pooling; the optional Indices output is the ONNX flat index into the input."""
    y = max_pool_values(x, auto_pad=auto_pad, ceil_mode=ceil_mode, dilations=dilations,
                        kernel_shape=kernel_shape, pads=pads, strides=strides)
    if not (ctx.num_outputs > 1 and ctx.output_used(1)):
        return y if ctx.num_outputs == 1 else (y, None)
    kernel, strides, dilations, begins, _, _, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    return y, _max_indices(x, kernel, strides, dilations, begins, out, storage_order,
                           np.array(_lowest(x.dtype), x.dtype))


def _max_indices(x, kernel, strides, dilations, begins, out, storage_order, low):
    """Argmax over each window by an explicit gather (first maximum wins), as ONNX flat indices."""
    nd = len(kernel)
    spatial = [int(s) for s in x.shape[2:]]
    # per dim: input coordinate of every (output position, tap), -1 when outside the input
    coords = []
    for i in range(nd):
        c = (np.arange(out[i]) * strides[i] - begins[i])[:, None] + np.arange(kernel[i]) * dilations[i]
        coords.append(np.where((c >= 0) & (c < spatial[i]), c, -1))
    grids = np.meshgrid(*[np.arange(o) for o in out], *[np.arange(k) for k in kernel], indexing="ij")
    pos = [coords[i][grids[i], grids[nd + i]] for i in range(nd)]  # each [*out, *kernel]
    valid = np.all([p >= 0 for p in pos], axis=0)
    safe = [np.maximum(p, 0) for p in pos]
    flat_x = jnp.reshape(x, (*x.shape[:2], -1))
    lin = np.ravel_multi_index(safe, spatial)  # row-major spatial index
    win = flat_x[:, :, lin.reshape(-1)].reshape((*x.shape[:2], *out, int(np.prod(kernel))))
    win = jnp.where(valid.reshape((*out, -1)), win, low)
    arg = jnp.argmax(win, axis=-1)
    order = lin if not storage_order else np.ravel_multi_index(safe, spatial, order="F")
    order = order.reshape((*out, -1))
    idx = jnp.take_along_axis(jnp.broadcast_to(jnp.asarray(order), (*x.shape[:2], *order.shape)),
                              arg[..., None], axis=-1)[..., 0]
    plane = int(np.prod(spatial))
    nc = jnp.arange(x.shape[0] * x.shape[1], dtype=jnp.int64).reshape((x.shape[0], x.shape[1]) + (1,) * nd)
    return idx.astype(jnp.int64) + nc * plane


def average_pool_values(x, *, auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides,
                        cl=False):
    """AveragePool (``cl``: ``x`` and the result channels last)."""
    st = _settings(x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode, cl)
    zero = np.array(0, x.dtype)
    total = _reduce(x, zero, lax.add, st.kernel, st.strides, st.dilations, st.padding, cl)
    count = average_pool_counts(_spatial(x, cl), st, count_include_pad)
    if cl:
        count = np.moveaxis(count, 1, -1)
    return (total / jnp.asarray(count, x.dtype)).astype(x.dtype)


@max_pool.channels_last
def max_pool_nhwc(ctx, x, **attrs):
    y = max_pool_values(x, cl=True, **attrs)
    return y if ctx.num_outputs == 1 else (y, None)


@importer("AveragePool", since=22)
def average_pool(ctx, x, *, auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides):
    """Average pooling: window sums over the number of counted elements."""
    return average_pool_values(x, auto_pad=auto_pad, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                               dilations=dilations, kernel_shape=kernel_shape, pads=pads, strides=strides)


@average_pool.channels_last
def average_pool_nhwc(ctx, x, **attrs):
    return average_pool_values(x, cl=True, **attrs)


@importer("LpPool", since=22)
def lp_pool(ctx, x, *, auto_pad, ceil_mode, dilations, kernel_shape, p, pads, strides):
    """Lp pooling: (sum |x|^p)^(1/p) over each window, pads contributing zero."""
    kernel, strides, dilations, begins, ends, extra, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    padcfg = [(b, e + x_) for b, e, x_ in zip(begins, ends, extra)]
    s = _reduce(jnp.abs(x) ** p, np.array(0, x.dtype), lax.add, kernel, strides, dilations, padcfg)
    return (s ** (1.0 / p)).astype(x.dtype)


@importer("GlobalAveragePool", since=22)
def global_average_pool(ctx, x):
    return jnp.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@global_average_pool.channels_last
def global_average_pool_nhwc(ctx, x):
    return jnp.mean(x, axis=(1, 2), keepdims=True)


@importer("GlobalMaxPool", since=22)
def global_max_pool(ctx, x):
    return jnp.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@global_max_pool.channels_last
def global_max_pool_nhwc(ctx, x):
    return jnp.max(x, axis=(1, 2), keepdims=True)


# its cases follow from ONNX semantics: onnxport_testkit.semantic_cases
@importer("GlobalLpPool", since=22)
def global_lp_pool(ctx, x, *, p):
    s = jnp.sum(jnp.abs(x) ** p, axis=tuple(range(2, x.ndim)), keepdims=True)
    return (s ** (1.0 / p)).astype(x.dtype)


@importer("MaxUnpool", since=22)
def max_unpool(ctx, x, indices, output_shape=None, *, kernel_shape, pads, strides):
    """Scatter pooled values to their argmax positions in the inferred unpooled shape (zeros
    elsewhere); a larger ``output_shape`` pads that result at the end of each dim."""
    nd = len(kernel_shape)
    kernel, strides, _ = spatial_settings(nd, kernel_shape, strides, None)
    pads = [int(v) for v in (pads or [0] * (2 * nd))]
    inferred = [*x.shape[:2]] + [
        (int(x.shape[2 + i]) - 1) * strides[i] + kernel[i] - pads[i] - pads[nd + i] for i in range(nd)]
    flat = jnp.zeros((int(np.prod(inferred)),), x.dtype)
    y = jnp.reshape(flat.at[jnp.reshape(indices, (-1,))].set(jnp.reshape(x, (-1,))), inferred)
    if output_shape is None:
        return y
    shape = ints(ctx, 2, output_shape)
    if any(s < i for s, i in zip(shape, inferred)):
        raise ctx.error(f"output_shape {shape} is smaller than the unpooled shape {inferred}")
    return jnp.pad(y, [(0, s - i) for s, i in zip(shape, inferred)])
