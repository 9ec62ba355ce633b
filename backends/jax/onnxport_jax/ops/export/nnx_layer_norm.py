"""``nnx.LayerNorm`` during an export: one ``onnxport_nnx_layer_norm`` primitive ->
LayerNormalization over the last axis (opset 17 on), the node the traced mean / variance
arithmetic is fused into. Calls it does not handle run Flax's own ``__call__`` (see :func:`intercept`)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax.core import ShapedArray
from jax.extend.core import Primitive

from onnxport import Sample, exporter

from ...layer_state import is_param_value, is_trace_value
from ._samples import randn

layer_norm_p = Primitive("onnxport_nnx_layer_norm")
#: below this opset every call runs Flax's own ``__call__``
MIN_OPSET = 17


@layer_norm_p.def_abstract_eval
def _abstract(x: Any, scale: Any, bias: Any, *, epsilon: float) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype)


def layer_class() -> type:
    from flax import nnx

    return nnx.LayerNorm


def _last_axis(axes: Any, ndim: int) -> bool:
    axes = axes if isinstance(axes, (tuple, list)) else (axes,)
    return len(axes) == 1 and isinstance(axes[0], int) and axes[0] in (-1, ndim - 1)


def intercept(layer: Any, opset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The primitive's result, or ``NotImplemented`` (Flax's own call) unless: opset 17 or later,
    one plain trace float32 input of rank 2 or more, no mask, scale and bias both used (float32),
    normalized and scaled over the last axis only, no ``dtype``, no cross-device axis, Flax's
    default dtype promotion."""
    from flax.nnx.nn import dtypes as flax_dtypes

    if opset < MIN_OPSET or len(args) != 1 or kwargs.get("mask") is not None or set(kwargs) - {"mask"}:
        return NotImplemented
    x = args[0]
    if not is_trace_value(x) or x.dtype != jnp.float32 or x.ndim < 2:
        return NotImplemented
    if (not layer.use_scale or not layer.use_bias or layer.dtype is not None or layer.axis_name is not None
            or layer.axis_index_groups is not None or layer.promote_dtype is not flax_dtypes.promote_dtype
            or not _last_axis(layer.reduction_axes, x.ndim) or not _last_axis(layer.feature_axes, x.ndim)):
        return NotImplemented
    scale, bias = layer.scale[...], layer.bias[...]
    if any(not is_param_value(p) or p.dtype != x.dtype or p.shape != x.shape[-1:] for p in (scale, bias)):
        return NotImplemented
    return layer_norm_p.bind(x, scale, bias, epsilon=float(layer.epsilon))


def _norm(features: int, **kw: Any) -> Any:
    from flax import nnx

    return nnx.LayerNorm(features, rngs=nnx.Rngs(0), **kw)


@exporter("lax.onnxport_nnx_layer_norm", samples=lambda: [
    Sample(_norm(6), (randn(2, 3, 6),), emits=("LayerNormalization",), name="sequence"),
    Sample(_norm(6, epsilon=1e-3), (randn(4, 6),), emits=("LayerNormalization",), name="rows_eps"),
    # a variance near epsilon (1e-6): a wrong epsilon shows
    Sample(_norm(6), (randn(2, 5, 6, seed=1) * 1e-3,), emits=("LayerNormalization",), name="small"),
])
def nnx_layer_norm(g, x, scale, bias, *, epsilon):
    """LayerNormalization over the last axis."""
    return g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=float(epsilon))


def layer_primitive() -> Primitive:
    return layer_norm_p
