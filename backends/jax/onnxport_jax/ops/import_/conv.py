"""Conv and ConvInteger on ``lax.conv_general_dilated``."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ._padding import resolve_pads, spatial_settings, window_taps


def _dims(nd: int, cl: bool = False, hwio: bool = False):
    sp = "DHW"[3 - nd:] if nd <= 3 else None
    if sp is None:  # lax accepts any distinct letters for spatial dims
        sp = "".join(chr(ord("a") + i) for i in range(nd))
    act = "N" + sp + "C" if cl else "NC" + sp
    return (act, sp + "IO" if hwio else "OI" + sp, act)


def conv_nd(x, w, strides, pads, dilations, group, lhs_dilation=None, out_type=None, cl=False, hwio=False):
    """``lax.conv_general_dilated`` on an NC... input (``cl``: N...C, channels last) and OI...
    weights (``hwio``: ...IO, spatial-major)."""
    nd = w.ndim - 2
    return lax.conv_general_dilated(
        x, w, window_strides=strides, padding=[(pads[i], pads[nd + i]) for i in range(nd)],
        lhs_dilation=lhs_dilation, rhs_dilation=dilations, dimension_numbers=_dims(nd, cl, hwio),
        feature_group_count=group, precision=lax.Precision.HIGHEST,
        preferred_element_type=out_type)


#: depthwise kernels up to this many taps run as shifted multiply-adds (one fused loop) instead of
#: a grouped convolution, which XLA:CPU runs tens of times slower than a dense one
_MAX_TAPS = 64


def _floating(x, w):
    return jnp.issubdtype(x.dtype, jnp.floating) and x.dtype == w.dtype


def depthwise_taps(x, w, strides, pads, dilations, cl=False):
    """A depthwise conv (group == input channels, ``w`` of shape [C * m, 1, *k]) as a sum over the
    kernel taps of strided slices of the padded input times per-channel weights."""
    nd = w.ndim - 2
    ca, a0 = (x.ndim - 1, 1) if cl else (1, 2)  # channel axis, first spatial axis
    m = w.shape[0] // x.shape[ca]
    if m > 1:  # output channel o reads input channel o // m
        x = jnp.repeat(x, m, axis=ca)
    cfg = [(0, 0)] * x.ndim
    for i in range(nd):
        cfg[a0 + i] = (pads[i], pads[nd + i])
    xp = jnp.pad(x, cfg)
    per_channel = (1,) * (x.ndim - 1) + (-1,) if cl else (1, -1) + (1,) * nd
    y = None
    for tap, sl in window_taps(xp, w.shape[2:], strides, dilations, a0):
        t = sl * jnp.reshape(w[(slice(None), 0, *tap)], per_channel)
        y = t if y is None else y + t
    return y


def grouped_pointwise(x, w, group, cl=False):
    """A grouped 1x1 conv (stride 1, no padding) as one batched matmul over the groups."""
    if cl:  # one matmul per group on its channel slice: no group-major copy of the activation
        cg, og = x.shape[-1] // group, w.shape[0] // group
        return jnp.concatenate([
            jnp.einsum("...c,oc->...o", x[..., i * cg:(i + 1) * cg], jnp.reshape(w[i * og:(i + 1) * og], (og, cg)),
                       precision=lax.Precision.HIGHEST)
            for i in range(group)], axis=-1)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    xg = jnp.reshape(x, (n, group, c // group, -1))
    wg = jnp.reshape(w, (group, w.shape[0] // group, c // group))
    y = lax.dot_general(wg, xg, (((2,), (2,)), ((0,), (1,))), precision=lax.Precision.HIGHEST,
                        preferred_element_type=x.dtype)  # [group, O/group, n, HW]
    return jnp.reshape(jnp.moveaxis(y, 2, 0), (n, w.shape[0], *sp))


def conv_fast(x, w, strides, pads, dilations, group, cl=False):
    """``conv_nd`` with the grouped shapes XLA:CPU runs slowly rewritten to faster forms."""
    nd = w.ndim - 2
    c = x.shape[-1] if cl else x.shape[1]
    if group > 1 and _floating(x, w) and nd >= 1:
        if group == c and w.shape[1] == 1 and int(np.prod(w.shape[2:])) <= _MAX_TAPS:
            return depthwise_taps(x, w, strides, pads, dilations, cl)
        if all(k == 1 for k in w.shape[2:]) and all(s == 1 for s in strides) and not any(pads):
            return grouped_pointwise(x, w, group, cl)
    return conv_nd(x, w, strides, pads, dilations, group, cl=cl)


def add_bias(y, b):
    if b is None:
        return y
    return y + jnp.reshape(b, (1, -1) + (1,) * (y.ndim - 2))


def conv_values(x, w, b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides, cl=False,
                hwio=False):
    """Conv (``cl``: ``x`` and the result channels last; ``hwio``: an ungrouped conv's weights
    spatial-major); SAME pads from the static input shape."""
    nd = w.ndim - 2
    kernel, strides, dilations = spatial_settings(
        nd, kernel_shape or (w.shape[:nd] if hwio else w.shape[2:]), strides, dilations)
    pads = resolve_pads(auto_pad, pads, x.shape[1:-1] if cl else x.shape[2:], kernel, strides, dilations)
    if hwio:
        y = conv_nd(x, w, strides, pads, dilations, 1, cl=cl, hwio=True)
    else:
        y = conv_fast(x, w, strides, pads, dilations, group, cl)
    if b is None:
        return y
    return y + b if cl else add_bias(y, b)


@importer("Conv", since=22)
def conv(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    """N-D convolution; SAME pads are computed from the static input shape."""
    return conv_values(x, w, b, auto_pad=auto_pad, dilations=dilations, group=group,
                       kernel_shape=kernel_shape, pads=pads, strides=strides)


@conv.channels_last
def conv_nhwc(ctx, x, w, b=None, **attrs):
    """Conv of an NHWC ``x`` (OIHW weights) into NHWC."""
    return conv_values(x, w, b, cl=True, **attrs)


@conv.channels_last(form="hwio")
def conv_nhwc_hwio(ctx, x, w, b=None, **attrs):
    """Ungrouped Conv of an NHWC ``x`` with HWIO weights into NHWC."""
    return conv_values(x, w, b, cl=True, hwio=True, **attrs)


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
