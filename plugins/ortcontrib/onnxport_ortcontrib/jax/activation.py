"""Gelu, FastGelu, BiasGelu, QuickGelu and BiasAdd (com.microsoft) for JAX."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import activation as C
from ..cases.activation import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ._common import wide


@importer("Gelu", since=1, domain=DOMAIN, cases=C.gelu_cases())
def gelu(ctx, x):
    """The exact (erf) GELU."""
    return jax.nn.gelu(wide(x), approximate=False).astype(x.dtype)


@importer("BiasGelu", since=1, domain=DOMAIN, cases=C.bias_gelu_cases())
def bias_gelu(ctx, a, b):
    """The exact GELU of ``a + b`` (``b`` broadcast along the last axis)."""
    return jax.nn.gelu(wide(a) + wide(b), approximate=False).astype(a.dtype)


@importer("FastGelu", since=1, domain=DOMAIN, cases=C.fast_gelu_cases())
def fast_gelu(ctx, x, bias=None):
    """The tanh approximation of GELU of ``x`` (+ ``bias``)."""
    y = wide(x) if bias is None else wide(x) + wide(bias)
    inner = math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)
    return (0.5 * y * (1.0 + jnp.tanh(inner))).astype(x.dtype)


@importer("QuickGelu", since=1, domain=DOMAIN, cases=C.quick_gelu_cases())
def quick_gelu(ctx, x, *, alpha=1.702):
    """``x * sigmoid(alpha * x)``."""
    y = wide(x)
    return (y * jax.nn.sigmoid(alpha * y)).astype(x.dtype)


@importer("BiasAdd", since=1, domain=DOMAIN, cases=C.bias_add_cases())
def bias_add(ctx, x, bias, skip):
    """``x + bias + skip`` (``bias`` along the last axis)."""
    return (wide(x) + wide(bias) + wide(skip)).astype(x.dtype)
