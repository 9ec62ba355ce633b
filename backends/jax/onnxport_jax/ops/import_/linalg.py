"""Einsum and Det."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer


@importer("Einsum", since=28)
def einsum(ctx, *xs, equation):
    eq = equation.replace(" ", "")
    out_dtype = xs[0].dtype
    return jnp.einsum(eq, *xs, precision=lax.Precision.HIGHEST, preferred_element_type=out_dtype)


@importer("Det", since=22)
def det(ctx, x):
    return jnp.linalg.det(x)
