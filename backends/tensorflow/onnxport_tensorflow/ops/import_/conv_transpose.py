"""ConvTranspose as a stride-dilated direct convolution with the flipped, regrouped kernel."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._padding import spatial_settings
from .conv import conv_last, to_first, to_last


def _dilate(x, strides):
    """Insert ``s - 1`` zeros between the elements of each spatial dim of channels-last ``x``."""
    for i, s in enumerate(strides):
        if s == 1:
            continue
        a = 1 + i
        n = x.shape[a]
        z = tf.stack([x] + [tf.zeros_like(x)] * (s - 1), axis=a + 1)
        shape = tf.concat([tf.shape(x)[:a], [n * s], tf.shape(x)[a + 1:]], 0)
        x = tf.reshape(z, shape)
        idx = [slice(None)] * len(x.shape)
        idx[a] = slice(0, (n - 1) * s + 1)
        x = x[tuple(idx)]
    return x


@importer("ConvTranspose", since=22)
def conv_transpose(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, output_padding,
                   output_shape, pads, strides):
    """Transposed convolution as a stride-dilated direct convolution with the flipped kernel."""
    x = tf.convert_to_tensor(x)
    w = tf.convert_to_tensor(w, x.dtype)
    nd = len(w.shape) - 2
    kernel, strides, dilations = spatial_settings(nd, kernel_shape or w.shape[2:], strides, dilations)
    out_pad = [int(p) for p in (output_padding or [0] * nd)]
    spatial = [int(s) for s in x.shape[2:]]
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    full = [s * (i - 1) + op + k for s, i, op, k in zip(strides, spatial, out_pad, span)]
    if output_shape:
        target = [int(v) for v in output_shape][-nd:]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = [i * s for i, s in zip(spatial, strides)]
    else:
        target = None
    if target is not None:
        total = [f - t for f, t in zip(full, target)]
        begins = [t // 2 for t in total] if auto_pad == "SAME_UPPER" else [t - t // 2 for t in total]
        ends = [t - bg for t, bg in zip(total, begins)]
    elif auto_pad == "VALID" or not pads:
        begins, ends = [0] * nd, [0] * nd
    else:
        begins, ends = [int(p) for p in pads[:nd]], [int(p) for p in pads[nd:]]
    lo = [k - 1 - bg for k, bg in zip(span, begins)]
    hi = [k - 1 - e + op for k, e, op in zip(span, ends, out_pad)]
    c_in, m_per_group = int(w.shape[0]), int(w.shape[1])
    wg = tf.reshape(w, [group, c_in // group, m_per_group, *kernel])
    wg = tf.reshape(tf.transpose(wg, [0, 2, 1, *range(3, 3 + nd)]), [group * m_per_group, c_in // group, *kernel])
    wg = tf.reverse(wg, list(range(2, 2 + nd)))
    wl = tf.transpose(wg, [*range(2, nd + 2), 1, 0])  # spatial..., I, O
    xl = _dilate(to_last(x, nd), strides)
    # negative pads crop
    crop = [slice(None)] + [slice(max(-a, 0), (xl.shape[1 + i] - max(-c, 0))) for i, (a, c) in enumerate(zip(lo, hi))] \
        + [slice(None)]
    if any(v < 0 for v in lo + hi):
        xl = xl[tuple(crop)]
    y = conv_last(xl, wl, [1] * nd, [max(v, 0) for v in lo] + [max(v, 0) for v in hi], dilations, group)
    if b is not None:
        y = y + tf.cast(b, y.dtype)
    return to_first(y, nd)
