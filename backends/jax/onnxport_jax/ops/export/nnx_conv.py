"""``nnx.Conv`` during an export: one ``onnxport_nnx_conv`` primitive -> the Conv that the traced
``conv_general_dilated`` gives (:mod:`.convolution`: Transposes to channels-first and back, which
the transpose optimizer cancels between layers; the kernel stored channels-first under its own
name), plus the bias add. Calls it does not handle run Flax's own ``__call__`` (see :func:`intercept`)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
import onnx_ir as ir
from jax import lax
from jax.core import ShapedArray
from jax.extend.core import Primitive

from onnxport import Sample, exporter

from ...layer_state import is_param_value, is_trace_value, remember
from ._samples import randn
from .convolution import conv_general_dilated

conv_p = Primitive("onnxport_nnx_conv")
#: below this opset every call runs Flax's own ``__call__``
MIN_OPSET = 1


def _out_shape(x_shape, k_shape, strides, padding, dilation) -> tuple[Any, ...]:
    spatial = [(int(n) + lo + hi - ((int(k) - 1) * d + 1)) // s + 1
               for n, k, s, (lo, hi), d in zip(x_shape[1:-1], k_shape[:-2], strides, padding, dilation)]
    return (x_shape[0], *spatial, k_shape[-1])


@conv_p.def_abstract_eval
def _abstract(x: Any, kernel: Any, *bias: Any, strides, padding, dilation, groups) -> ShapedArray:
    return ShapedArray(_out_shape(x.shape, kernel.shape, strides, padding, dilation), x.dtype)


def layer_class() -> type:
    from flax import nnx

    return nnx.Conv


def _ints(v: Any, n: int) -> tuple[int, ...] | None:
    v = 1 if v is None else v
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v if len(v) == n and all(isinstance(i, int) for i in v) else None


def intercept(layer: Any, opset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The primitive's result, or ``NotImplemented`` (Flax's own call) unless: one plain trace
    float32 input with one batch axis and static spatial and channel sizes; padding ``SAME``,
    ``VALID`` or explicit pairs (not circular, reflect or causal); no input dilation, no kernel
    mask, no sharding; Flax's default ``conv_general_dilated``, dtype promotion and precision,
    no ``dtype`` / ``preferred_element_type``; kernel and bias float32."""
    from flax.nnx.nn import dtypes as flax_dtypes
    from flax.nnx.nn.linear import canonicalize_padding

    if len(args) != 1 or kwargs.get("out_sharding") is not None or set(kwargs) - {"out_sharding"}:
        return NotImplemented
    if (layer.mask is not None or layer.dtype is not None or layer.precision is not None
            or layer.conv_general_dilated is not lax.conv_general_dilated
            or layer.promote_dtype is not flax_dtypes.promote_dtype or layer.preferred_element_type is not None):
        return NotImplemented
    x = args[0]
    n = len(layer.kernel_size)
    if not is_trace_value(x) or x.dtype != jnp.float32 or x.ndim != n + 2:
        return NotImplemented
    if any(not isinstance(d, (int, np.integer)) for d in x.shape[1:]):
        return NotImplemented
    strides, dilation = _ints(layer.strides, n), _ints(layer.kernel_dilation, n)
    if strides is None or dilation is None or _ints(layer.input_dilation, n) != (1,) * n:
        return NotImplemented
    kernel = layer.kernel[...]
    bias = layer.bias[...] if layer.bias is not None else None
    if (not is_param_value(kernel) or kernel.dtype != jnp.float32 or kernel.ndim != n + 2
            or kernel.shape[-2] * layer.feature_group_count != x.shape[-1]
            or (bias is not None and (not is_param_value(bias) or bias.dtype != jnp.float32
                                      or bias.shape != kernel.shape[-1:]))):
        return NotImplemented
    padding = canonicalize_padding(layer.padding, n)
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID", "SAME_LOWER"):
            return NotImplemented
        window = [(int(k) - 1) * d + 1 for k, d in zip(kernel.shape[:-2], dilation)]
        padding = lax.padtype_to_pads([int(d) for d in x.shape[1:-1]], window, strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(padding) != n:
        return NotImplemented
    return remember("conv", conv_p.bind(x, kernel, *([bias] if bias is not None else []), strides=strides, padding=padding,
                       dilation=dilation, groups=int(layer.feature_group_count)))


def _conv(cin: int, cout: int, size: tuple[int, ...], **kw: Any) -> Any:
    from flax import nnx

    return nnx.Conv(cin, cout, size, rngs=nnx.Rngs(0), **kw)


@exporter("lax.onnxport_nnx_conv", samples=lambda: [
    Sample(_conv(3, 4, (3, 3)), (randn(2, 8, 8, 3),), emits=("Conv",), name="same"),
    Sample(_conv(4, 6, (3, 3), strides=2, padding="VALID", use_bias=False), (randn(1, 9, 9, 4),), emits=("Conv",),
           name="strided_valid"),
    Sample(_conv(4, 6, (3,), kernel_dilation=2, feature_group_count=2, padding=((1, 2),)), (randn(2, 10, 4),),
           emits=("Conv",), name="grouped_dilated_1d"),
])
def nnx_conv(g, x, kernel, *bias, strides, padding, dilation, groups):
    """:func:`.convolution.conv_general_dilated` in Flax's layout, then ``+ bias`` reshaped to
    ``(1, ..., 1, C)`` as Flax adds it."""
    nd = len(strides)
    lhs = (0, nd + 1, *range(1, nd + 1))
    dn = lax.ConvDimensionNumbers(lhs, (nd + 1, nd, *range(nd)), lhs)
    y = conv_general_dilated(g, x, kernel, window_strides=strides, padding=padding, lhs_dilation=(1,) * nd,
                             rhs_dilation=dilation, dimension_numbers=dn, feature_group_count=groups)
    if not bias:
        return y
    row = [1] * (nd + 1) + [int(g.in_aval(2).shape[0])]
    b = g.op("Reshape", bias[0], g.const(np.asarray(row, np.int64)))
    b.dtype, b.shape = bias[0].dtype, ir.Shape(row)  # typed as the traced reshape: the bias folds into Conv
    return g.op("Add", y, b)


def layer_primitive() -> Primitive:
    return conv_p
