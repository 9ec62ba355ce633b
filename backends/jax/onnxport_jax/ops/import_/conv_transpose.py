"""ConvTranspose as a stride-dilated direct convolution with the flipped, regrouped kernel."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer

from ._padding import spatial_settings
from .conv import add_bias, conv_nd


@importer("ConvTranspose", since=22)
def conv_transpose(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, output_padding,
                   output_shape, pads, strides):
    """Transposed convolution as a stride-dilated direct convolution with the flipped kernel."""
    nd = w.ndim - 2
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
        if auto_pad == "SAME_UPPER":
            begins = [t // 2 for t in total]
        else:
            begins = [t - t // 2 for t in total]
        ends = [t - bg for t, bg in zip(total, begins)]
    elif auto_pad == "VALID" or not pads:
        begins, ends = [0] * nd, [0] * nd
    else:
        begins, ends = [int(p) for p in pads[:nd]], [int(p) for p in pads[nd:]]
    # direct-conv padding of the stride-dilated input: span-1-begin before, span-1-end+out_pad after
    conv_pads = [k - 1 - bg for k, bg in zip(span, begins)] + [
        k - 1 - e + op for k, e, op in zip(span, ends, out_pad)]
    c_in, m_per_group = w.shape[0], w.shape[1]
    wg = jnp.reshape(w, (group, c_in // group, m_per_group, *w.shape[2:]))
    wg = jnp.swapaxes(wg, 1, 2).reshape((group * m_per_group, c_in // group, *w.shape[2:]))
    wg = jnp.flip(wg, axis=tuple(range(2, 2 + nd)))
    y = conv_nd(x, wg, [1] * nd, conv_pads, dilations, group, lhs_dilation=strides)
    return add_bias(y, b)
