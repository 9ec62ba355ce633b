"""``nnx.BatchNorm`` with running statistics during an export: one ``onnxport_nnx_batch_norm``
primitive -> BatchNormalization (channels-first: Transposes around it for Flax's channels-last
input, which the transpose optimizer cancels between layers), the node the traced arithmetic is
fused into. Calls it does not handle run Flax's own ``__call__`` (see :func:`intercept`)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax.core import ShapedArray
from jax.extend.core import Primitive

from onnxport import Sample, exporter

from ...layer_state import is_param_value, is_trace_value, made_by
from ._samples import randn

batch_norm_p = Primitive("onnxport_nnx_batch_norm")
#: below this opset every call runs Flax's own ``__call__``
MIN_OPSET = 1


@batch_norm_p.def_abstract_eval
def _abstract(x: Any, *params: Any, epsilon: float) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype)


def layer_class() -> type:
    from flax import nnx

    return nnx.BatchNorm


def intercept(layer: Any, opset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The primitive's result, or ``NotImplemented`` (Flax's own call) unless: running averages
    are used (eval mode: no batch statistics, no state update); one plain trace float32 input of
    rank 2 or more, normalized per last axis, of rank 2 or straight from an intercepted ``nnx.Conv``; no mask; scale and bias used; no ``dtype``, no
    cross-device axis, Flax's default dtype promotion; statistics and weights float32."""
    from flax.nnx.nn import dtypes as flax_dtypes

    if len(args) != 1 or set(kwargs) - {"use_running_average", "mask"} or kwargs.get("mask") is not None:
        return NotImplemented
    running = kwargs.get("use_running_average")
    if (running if running is not None else layer.use_running_average) is not True:
        return NotImplemented
    x = args[0]
    if not is_trace_value(x) or x.dtype != jnp.float32 or x.ndim < 2 or layer.axis not in (-1, x.ndim - 1):
        return NotImplemented
    if x.ndim > 2 and not made_by("conv", x):
        # channels-last arithmetic is fused into BatchNormalization only where a Conv's Transposes
        # move it channels-first; elsewhere the traced form stays (and its numbers differ)
        return NotImplemented
    if (not layer.use_scale or not layer.use_bias or layer.dtype is not None or layer.axis_name is not None
            or layer.axis_index_groups is not None or layer.promote_dtype is not flax_dtypes.promote_dtype):
        return NotImplemented
    params = [layer.scale[...], layer.bias[...], layer.mean[...], layer.var[...]]
    if any(not is_param_value(p) or p.dtype != jnp.float32 or p.shape != x.shape[-1:] for p in params):
        return NotImplemented
    return batch_norm_p.bind(x, *params, epsilon=float(layer.epsilon))


def _norm(features: int) -> Any:
    from flax import nnx

    m = nnx.BatchNorm(features, use_running_average=True, rngs=nnx.Rngs(0))
    m.mean[...] = jnp.linspace(-1.0, 1.0, features)
    m.var[...] = jnp.linspace(0.5, 2.0, features)
    return m


def _conv_norm_class() -> type:
    from flax import nnx

    class ConvNorm(nnx.Module):
        def __init__(self) -> None:
            self.conv = nnx.Conv(3, 4, (3, 3), rngs=nnx.Rngs(0))
            self.norm = _norm(4)

        def __call__(self, x: Any) -> Any:
            return self.norm(self.conv(x))

    return ConvNorm


@exporter("lax.onnxport_nnx_batch_norm", samples=lambda: [
    Sample(_conv_norm_class()(), (randn(2, 4, 4, 3),), emits=("Conv", "BatchNormalization"), name="after_conv"),
    Sample(_norm(5), (randn(4, 5),), emits=("BatchNormalization",), name="rows"),
])
def nnx_batch_norm(g, x, scale, bias, mean, var, *, epsilon):
    """BatchNormalization over the channels (moved to axis 1 and back for rank 3 and more)."""
    r = g.rank(x)
    if r == 2:
        return g.op("BatchNormalization", x, scale, bias, mean, var, epsilon=float(epsilon))
    xt = g.op("Transpose", x, perm=[0, r - 1, *range(1, r - 1)])
    y = g.op("BatchNormalization", xt, scale, bias, mean, var, epsilon=float(epsilon))
    return g.op("Transpose", y, perm=[0, *range(2, r), 1])


def layer_primitive() -> Primitive:
    return batch_norm_p
