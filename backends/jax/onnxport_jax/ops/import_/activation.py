"""Activations: Relu family, sigmoid-like, Gelu, Softplus, Shrink, Clip.

Scalar constants are numpy scalars of the input's dtype: JAX embeds them in the traced
computation, where a ``jnp`` scalar would be one more eager dispatch on each call.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from onnxport import importer


@importer("Relu", since=14)
def relu(ctx, x):
    return jnp.maximum(x, np.zeros((), x.dtype))


@importer("Sigmoid", since=13)
def sigmoid(ctx, x):
    return jax.nn.sigmoid(x)


@importer("Tanh", since=13)
def tanh(ctx, x):
    return jnp.tanh(x)


@importer("LeakyRelu", since=16)
def leaky_relu(ctx, x, *, alpha):
    return jnp.where(x >= 0, x, x * np.asarray(alpha, x.dtype))


@importer("PRelu", since=16)
def prelu(ctx, x, slope):
    return jnp.where(x < 0, x * slope, x).astype(x.dtype)


@importer("Elu", since=22)
def elu(ctx, x, *, alpha):
    return jnp.where(x > 0, x, np.asarray(alpha, x.dtype) * jnp.expm1(x))


@importer("Selu", since=22)
def selu(ctx, x, *, alpha, gamma):
    a, g = np.asarray(alpha, x.dtype), np.asarray(gamma, x.dtype)
    return g * jnp.where(x > 0, x, a * jnp.expm1(x))


@importer("Celu", since=28)
def celu(ctx, x, *, alpha):
    a = np.asarray(alpha, x.dtype)
    return jnp.maximum(x, 0) + jnp.minimum(0, a * jnp.expm1(x / a))


@importer("Gelu", since=20)
def gelu(ctx, x, *, approximate):
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"unknown approximate={approximate!r} (expected 'none' or 'tanh')")
    return jax.nn.gelu(x, approximate=approximate == "tanh")


@importer("HardSigmoid", since=22)
def hard_sigmoid(ctx, x, *, alpha, beta):
    return jnp.clip(x * np.asarray(alpha, x.dtype) + np.asarray(beta, x.dtype), 0, 1)


@importer("HardSwish", since=22)
def hard_swish(ctx, x):
    return x * jnp.clip(x / np.asarray(6, x.dtype) + np.asarray(0.5, x.dtype), 0, 1)


@importer("Softplus", since=22)
def softplus(ctx, x):
    return jax.nn.softplus(x)


@importer("Softsign", since=22)
def softsign(ctx, x):
    return x / (1 + jnp.abs(x))


@importer("ThresholdedRelu", since=22)
def thresholded_relu(ctx, x, *, alpha):
    return jnp.where(x > np.asarray(alpha, x.dtype), x, np.zeros((), x.dtype))


@importer("Mish", since=22)
def mish(ctx, x):
    return x * jnp.tanh(jax.nn.softplus(x))


@importer("Swish", since=24)
def swish(ctx, x, *, alpha):
    return x * jax.nn.sigmoid(np.asarray(alpha, x.dtype) * x)


@importer("Shrink", since=9)
def shrink(ctx, x, *, bias, lambd):
    # computed in float for integer inputs too, then cast back to the input type
    wide = x.astype(jnp.promote_types(x.dtype, jnp.float32)) if jnp.issubdtype(x.dtype, jnp.integer) else x
    out = jnp.where(wide < -lambd, wide + bias, jnp.where(wide > lambd, wide - bias, 0))
    return out.astype(x.dtype)


@importer("Clip", since=13)
def clip(ctx, x, min=None, max=None):  # noqa: A002 - ONNX input names
    if min is not None:
        x = jnp.maximum(x, jnp.asarray(min, x.dtype))
    if max is not None:
        x = jnp.minimum(x, jnp.asarray(max, x.dtype))
    return x
