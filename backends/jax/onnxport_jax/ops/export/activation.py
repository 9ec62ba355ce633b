"""Activations that are JAX primitives: tanh, logistic (-> Tanh, Sigmoid). relu, gelu, silu,
softplus ... are JAX functions of other primitives (custom_jvp: :mod:`.call` exports their primal)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import Sample, exporter

from ._samples import randn


@exporter("lax.tanh", samples=[Sample(jnp.tanh, (randn(2, 3, 4),), emits=("Tanh",))])
def tanh(g, x, **_):
    return g.op("Tanh", x)


@exporter("lax.logistic", samples=[Sample(jax.nn.sigmoid, (randn(2, 3, 4),), emits=("Sigmoid",))])
def logistic(g, x, **_):
    return g.op("Sigmoid", x)
