"""MaxPool (with ONNX argmax indices), AveragePool, LpPool, the Global forms and MaxUnpool.

Pooling runs channels last over an explicitly padded input (exact ONNX padding and ceil-mode
semantics): TensorFlow's pooling kernels where it has one for the rank, dtype and dilation, else folds
of the kernel's strided slices (any rank and dilation).
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.pads import average_pool_counts, pool_settings

from ._padding import same_pads, spatial_settings, window_taps
from ._static import ints
from .conv import to_first, to_last

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "AveragePool": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5)")},
}


def _spatial(x, cl=False):
    return [int(s) for s in (x.shape[1:-1] if cl else x.shape[2:])]


def _settings(x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode, cl=False):
    """Kernel, strides, dilations, begin pads, end pads, ceil-mode extra end pads, out sizes."""
    return pool_settings(_spatial(x, cl), kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)


def _fold(xl, init, op, kernel, strides, dilations, pads):
    """``op`` folded over the kernel taps' strided slices of the padded channels-last ``xl``."""
    nd = len(kernel)
    cfg = [[0, 0]] + [list(p) for p in pads] + [[0, 0]]
    xp = tf.pad(xl, cfg, constant_values=init) if any(any(p) for p in pads) else xl
    spatial = [int(s) for s in xp.shape[1:1 + nd]]
    y = None
    for _, sl in window_taps(xp, kernel, strides, dilations, 1, spatial):
        y = sl if y is None else op(y, sl)
    return y


def _is_same(spatial, kernel, strides, padcfg) -> bool:
    """Whether the pads are the ones TensorFlow's SAME padding takes (an output of ceil(n / s),
    the extra pad at the end): its pooling kernels then skip the padding, no padded copy."""
    pads = [b for b, _ in padcfg] + [e for _, e in padcfg]
    if pads != same_pads(spatial, kernel, strides, [1] * len(kernel), "SAME_UPPER"):
        return False
    return all((n + b + e - k) // s + 1 == -(-n // s) for n, k, s, (b, e) in zip(spatial, kernel, strides, padcfg))


def _lowest(dtype):
    return dtype.min if not dtype.is_floating else -np.inf


def max_pool_values(x, *, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, cl=False, **_):
    """MaxPool's values (``cl``: ``x`` and the result channels last)."""
    x = tf.convert_to_tensor(x)
    kernel, strides, dilations, begins, ends, extra, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode, cl)
    nd = len(kernel)
    xl = x if cl else to_last(x, nd)
    padcfg = [(b, e + x_) for b, e, x_ in zip(begins, ends, extra)]
    # TensorFlow's pooling kernels: float32 at every rank, float16 up to 2-D (no float64, no 3-D float16)
    kernel_dtype = x.dtype == tf.float32 or (x.dtype == tf.float16 and nd < 3)
    if all(d == 1 for d in dilations) and nd in (1, 2, 3) and kernel_dtype:
        if any(any(p) for p in padcfg) and _is_same(_spatial(xl, True), kernel, strides, padcfg):
            y = tf.nn.max_pool(xl, kernel, strides, "SAME")  # the padding never wins a window
        else:
            cfg = [[0, 0]] + [list(p) for p in padcfg] + [[0, 0]]
            xp = tf.pad(xl, cfg, constant_values=_lowest(x.dtype)) if any(any(p) for p in padcfg) else xl
            y = tf.nn.max_pool(xp, kernel, strides, "VALID")
    else:
        y = _fold(xl, _lowest(x.dtype), tf.maximum, kernel, strides, dilations, padcfg)
    return y if cl else to_first(y, nd)


@importer("MaxPool", since=22)
def max_pool(ctx, x, *, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides):
    """Max pooling; the optional Indices output is the ONNX flat index into the input."""
    y = max_pool_values(x, auto_pad=auto_pad, ceil_mode=ceil_mode, dilations=dilations,
                        kernel_shape=kernel_shape, pads=pads, strides=strides)
    if not (ctx.num_outputs > 1 and ctx.output_used(1)):
        return y if ctx.num_outputs == 1 else (y, None)
    x = tf.convert_to_tensor(x)
    kernel, strides, dilations, begins, _, _, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    return y, _max_indices(x, kernel, strides, dilations, begins, out, storage_order)


def _max_indices(x, kernel, strides, dilations, begins, out, storage_order):
    """Argmax over each window by an explicit gather (first maximum wins), as ONNX flat indices."""
    nd = len(kernel)
    spatial = [int(s) for s in x.shape[2:]]
    coords = []
    for i in range(nd):
        c = (np.arange(out[i]) * strides[i] - begins[i])[:, None] + np.arange(kernel[i]) * dilations[i]
        coords.append(np.where((c >= 0) & (c < spatial[i]), c, -1))
    grids = np.meshgrid(*[np.arange(o) for o in out], *[np.arange(k) for k in kernel], indexing="ij")
    pos = [coords[i][grids[i], grids[nd + i]] for i in range(nd)]
    valid = np.all([p >= 0 for p in pos], axis=0)
    safe = [np.maximum(p, 0) for p in pos]
    n, c = int(x.shape[0]), int(x.shape[1])
    flat_x = tf.reshape(x, [n, c, -1])
    lin = np.ravel_multi_index(safe, spatial)
    win = tf.reshape(tf.gather(flat_x, lin.reshape(-1), axis=2), [n, c, *out, int(np.prod(kernel))])
    win = tf.where(valid.reshape((*out, -1)), win, tf.constant(_lowest(x.dtype), x.dtype))
    arg = tf.argmax(win, axis=-1, output_type=tf.int64)
    order = lin if not storage_order else np.ravel_multi_index(safe, spatial, order="F")
    order = tf.constant(order.reshape((*out, -1)), tf.int64)
    idx = tf.gather(order[None, None] * tf.ones([n, c] + [1] * (nd + 1), tf.int64), arg[..., None],
                    batch_dims=nd + 2)[..., 0]
    plane = int(np.prod(spatial))
    nc = tf.reshape(tf.range(n * c, dtype=tf.int64), [n, c] + [1] * nd)
    return idx + nc * plane


def average_pool_values(x, *, auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides,
                        cl=False):
    """AveragePool (``cl``: ``x`` and the result channels last)."""
    x = tf.convert_to_tensor(x)
    st = _settings(x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode, cl)
    nd = len(st.kernel)
    xl = x if cl else to_last(x, nd)
    padcfg = st.padding
    count = np.moveaxis(average_pool_counts(_spatial(x, cl), st, count_include_pad), 1, -1)
    size = math.prod(st.kernel)
    kernel_dtype = x.dtype == tf.float32 or (x.dtype == tf.float16 and nd < 3)
    if (all(d == 1 for d in st.dilations) and kernel_dtype and not count_include_pad
            and any(any(p) for p in padcfg) and _is_same(_spatial(xl, True), st.kernel, st.strides, padcfg)):
        y = tf.nn.avg_pool(xl, st.kernel, st.strides, "SAME")  # divides by the in-bounds count, as ONNX does here
    elif all(d == 1 for d in st.dilations) and kernel_dtype:  # TensorFlow's kernel over the zero-padded input
        cfg = [[0, 0]] + [list(p) for p in padcfg] + [[0, 0]]
        xp = tf.pad(xl, cfg) if any(any(p) for p in padcfg) else xl
        y = tf.nn.avg_pool(xp, st.kernel, st.strides, "VALID")
        if not np.all(count == size):  # the kernel divides by the window size: rescale to the counted elements
            y = y * tf.constant(size / count, x.dtype)
    else:
        y = _fold(xl, 0, tf.add, st.kernel, st.strides, st.dilations, padcfg) / tf.constant(count, x.dtype)
    return y if cl else to_first(y, nd)


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
    x = tf.convert_to_tensor(x)
    kernel, strides, dilations, begins, ends, extra, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    nd = len(kernel)
    padcfg = [(b, e + x_) for b, e, x_ in zip(begins, ends, extra)]
    s = _fold(to_last(tf.abs(x) ** p, nd), 0, tf.add, kernel, strides, dilations, padcfg)
    return to_first(s ** (1.0 / p), nd)


@importer("GlobalAveragePool", since=22)
def global_average_pool(ctx, x):
    return tf.reduce_mean(x, axis=list(range(2, len(x.shape))), keepdims=True)


@global_average_pool.channels_last
def global_average_pool_nhwc(ctx, x):
    return tf.reduce_mean(x, axis=(1, 2), keepdims=True)


@importer("GlobalMaxPool", since=22)
def global_max_pool(ctx, x):
    return tf.reduce_max(x, axis=list(range(2, len(x.shape))), keepdims=True)


@global_max_pool.channels_last
def global_max_pool_nhwc(ctx, x):
    return tf.reduce_max(x, axis=(1, 2), keepdims=True)


# no official node case and no runtime implements GlobalLpPool-22: small hand-computed cases
@importer("GlobalLpPool", since=22)  # declared cases: the testkit's semantic_cases
def global_lp_pool(ctx, x, *, p):
    s = tf.reduce_sum(tf.abs(x) ** p, axis=list(range(2, len(x.shape))), keepdims=True)
    return s ** (1.0 / p)


@importer("MaxUnpool", since=22)
def max_unpool(ctx, x, indices, output_shape=None, *, kernel_shape, pads, strides):
    """Scatter pooled values to their argmax positions in the inferred unpooled shape (zeros
    elsewhere); a larger ``output_shape`` pads that result at the end of each dim."""
    x = tf.convert_to_tensor(x)
    nd = len(kernel_shape)
    kernel, strides, _ = spatial_settings(nd, kernel_shape, strides, None)
    pads = [int(v) for v in (pads or [0] * (2 * nd))]
    inferred = [int(d) for d in x.shape[:2]] + [
        (int(x.shape[2 + i]) - 1) * strides[i] + kernel[i] - pads[i] - pads[nd + i] for i in range(nd)]
    y = tf.scatter_nd(tf.reshape(tf.cast(indices, tf.int64), [-1, 1]), tf.reshape(x, [-1]),
                      [int(np.prod(inferred))])
    y = tf.reshape(y, inferred)
    if output_shape is None:
        return y
    shape = ints(ctx, 2, output_shape)
    if any(s < i for s, i in zip(shape, inferred)):
        raise ctx.error(f"output_shape {shape} is smaller than the unpooled shape {inferred}")
    return tf.pad(y, [[0, s - i] for s, i in zip(shape, inferred)])
