"""``nnx.Linear`` during an export: one ``onnxport_nnx_linear`` primitive -> Gemm (rank-2 input
with a bias) or MatMul (+ Add of the bias), the ops the traced ``dot_general`` + bias add end as.
Calls it does not handle run Flax's own ``__call__`` (see :func:`intercept`)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax
from jax.core import ShapedArray
from jax.extend.core import Primitive

from onnxport import Sample, exporter

from ...layer_state import is_param_value, is_trace_value
from ._samples import randn

linear_p = Primitive("onnxport_nnx_linear")
#: below this opset every call runs Flax's own ``__call__``
MIN_OPSET = 1


@linear_p.def_abstract_eval
def _abstract(x: Any, kernel: Any, *bias: Any) -> ShapedArray:
    return ShapedArray((*x.shape[:-1], kernel.shape[-1]), x.dtype)


def layer_class() -> type:
    from flax import nnx

    return nnx.Linear


def intercept(layer: Any, opset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The primitive's result, or ``NotImplemented`` (Flax's own call) unless: one plain trace
    input, no sharding, Flax's default ``dot_general`` / dtype promotion / precision, no
    ``dtype`` / ``preferred_element_type``, input, kernel and bias of one floating dtype."""
    from flax.nnx.nn import dtypes as flax_dtypes

    if len(args) != 1 or kwargs.get("out_sharding") is not None or set(kwargs) - {"out_sharding"}:
        return NotImplemented
    if (layer.dtype is not None or layer.precision is not None or layer.dot_general is not lax.dot_general
            or layer.promote_dtype is not flax_dtypes.promote_dtype or layer.preferred_element_type is not None):
        return NotImplemented
    x = args[0]
    kernel = layer.kernel[...]
    bias = layer.bias[...] if layer.bias is not None else None
    if not is_trace_value(x) or not is_param_value(kernel) or (bias is not None and not is_param_value(bias)):
        return NotImplemented
    if (not jnp.issubdtype(x.dtype, jnp.floating) or kernel.dtype != x.dtype or kernel.ndim != 2
            or x.ndim < 1 or x.shape[-1] != kernel.shape[0]
            or (bias is not None and (bias.dtype != x.dtype or bias.shape != kernel.shape[1:]))):
        return NotImplemented
    return linear_p.bind(x, kernel, *([bias] if bias is not None else []))


def _linear(features_in: int, features_out: int, **kw: Any) -> Any:
    from flax import nnx

    return nnx.Linear(features_in, features_out, rngs=nnx.Rngs(0), **kw)


@exporter("lax.onnxport_nnx_linear", samples=lambda: [
    Sample(_linear(4, 5), (randn(3, 4),), emits=("Gemm",), name="rows"),
    Sample(_linear(4, 5), (randn(2, 3, 4),), emits=("MatMul", "Add"), name="sequence"),
    Sample(_linear(4, 5, use_bias=False), (randn(2, 3, 4),), emits=("MatMul",), name="no_bias"),
])
def nnx_linear(g, x, kernel, *bias):
    """``x @ kernel + bias``: Gemm for a rank-2 ``x`` with a bias, else MatMul (+ Add)."""
    if bias and g.rank(x) == 2:
        return g.op("Gemm", x, kernel, bias[0])
    y = g.op("MatMul", x, kernel)
    return g.op("Add", y, bias[0]) if bias else y


def layer_primitive() -> Primitive:
    return linear_p
