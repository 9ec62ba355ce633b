"""Conversions and identities: convert_element_type (-> Cast), copy, copy_p, stop_gradient,
reduce_precision, optimization_barrier (-> nothing)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from onnxport import Sample, exporter

from ._samples import randn

_X = randn(2, 3, 4)


@exporter("lax.convert_element_type", samples=[
    Sample(lambda x: x.astype(jnp.int32), (_X * 3,), emits=("Cast",)),
    Sample(lambda x: (x > 0).astype(jnp.float32), (_X,), emits=("Cast",), name="bool"),
])
def convert_element_type(g, x, *, new_dtype, **_):
    return g.cast(x, g.onnx_dtype(new_dtype))


@exporter("lax.copy", samples=[Sample(lambda x: jnp.array(x, copy=True) * 2, (_X,), emits=("Mul",))])
@exporter("lax.copy_p", samples=[Sample(lambda x: lax.copy_p.bind(x) * 2, (_X,), emits=("Mul",))])
@exporter("lax.stop_gradient", samples=[Sample(lambda x: lax.stop_gradient(x) * 2, (_X,), emits=("Mul",)),
                                        Sample(lambda x: jax.nn.logsumexp(x, axis=-1), (_X,), emits=("ReduceSum", "Log"),
                                               name="logsumexp")])
@exporter("lax.reduce_precision", samples=[
    Sample(lambda x: lax.reduce_precision(x, exponent_bits=8, mantissa_bits=23) * 2, (_X,), emits=("Mul",))])
@exporter("lax.optimization_barrier", samples=[
    Sample(lambda x: lax.optimization_barrier(x) * 2, (_X,), emits=("Mul",))])
def identity(g, *xs, **_):
    """The value itself: these change nothing that ONNX computes."""
    return xs if len(xs) > 1 or g.eqn.primitive.multiple_results else xs[0]

