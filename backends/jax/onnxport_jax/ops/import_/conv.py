"""Conv and ConvInteger on ``lax.conv_general_dilated``."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer

from ._padding import resolve_pads, spatial_settings


def _dims(nd: int):
    sp = "DHW"[3 - nd:] if nd <= 3 else None
    if sp is None:  # lax accepts any distinct letters for spatial dims
        sp = "".join(chr(ord("a") + i) for i in range(nd))
    return ("NC" + sp, "OI" + sp, "NC" + sp)


def conv_nd(x, w, strides, pads, dilations, group, lhs_dilation=None, out_type=None):
    nd = w.ndim - 2
    return lax.conv_general_dilated(
        x, w, window_strides=strides, padding=[(pads[i], pads[nd + i]) for i in range(nd)],
        lhs_dilation=lhs_dilation, rhs_dilation=dilations, dimension_numbers=_dims(nd),
        feature_group_count=group, precision=lax.Precision.HIGHEST,
        preferred_element_type=out_type)


def add_bias(y, b):
    if b is None:
        return y
    return y + jnp.reshape(b, (1, -1) + (1,) * (y.ndim - 2))


@importer("Conv", since=22)
def conv(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    """N-D convolution; SAME pads are computed from the static input shape."""
    nd = w.ndim - 2
    kernel, strides, dilations = spatial_settings(nd, kernel_shape or w.shape[2:], strides, dilations)
    pads = resolve_pads(auto_pad, pads, x.shape[2:], kernel, strides, dilations)
    return add_bias(conv_nd(x, w, strides, pads, dilations, group), b)


@importer("ConvInteger", since=10)
def conv_integer(ctx, x, w, x_zero_point=None, w_zero_point=None, *, auto_pad, dilations, group,
                 kernel_shape, pads, strides):
    """Integer convolution: (x - x_zero) * (w - w_zero) accumulated exactly in int32."""
    nd = w.ndim - 2
    kernel, strides, dilations = spatial_settings(nd, kernel_shape or w.shape[2:], strides, dilations)
    pads = resolve_pads(auto_pad, pads, x.shape[2:], kernel, strides, dilations)
    xi = jnp.asarray(x, jnp.int32)
    wi = jnp.asarray(w, jnp.int32)
    # padding happens after the zero-point shift in ONNX semantics: pad with zeros of the shifted input
    if x_zero_point is not None:
        xi = xi - jnp.asarray(x_zero_point, jnp.int32).reshape(())
    if w_zero_point is not None:
        wzp = jnp.asarray(w_zero_point, jnp.int32)
        wi = wi - (wzp.reshape((-1,) + (1,) * (wi.ndim - 1)) if wzp.ndim else wzp)
    return conv_nd(xi, wi, strides, pads, dilations, group, out_type=jnp.int32).astype(jnp.int32)
