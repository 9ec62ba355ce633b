"""Element-wise unary math: exp/log/roots, rounding, trigonometry, sign and float tests."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer

_SIMPLE = {
    "Exp": (13, jnp.exp),
    "Log": (13, jnp.log),
    "Sqrt": (13, jnp.sqrt),
    "Floor": (13, jnp.floor),
    "Ceil": (13, jnp.ceil),
    "Round": (22, jnp.round),  # half to even, as ONNX requires
    "Erf": (13, lax.erf),
    "Sin": (22, jnp.sin),
    "Cos": (22, jnp.cos),
    "Tan": (22, jnp.tan),
    "Asin": (22, jnp.arcsin),
    "Acos": (22, jnp.arccos),
    "Atan": (22, jnp.arctan),
    "Sinh": (22, jnp.sinh),
    "Cosh": (22, jnp.cosh),
    "Asinh": (22, jnp.arcsinh),
    "Acosh": (22, jnp.arccosh),
    "Atanh": (22, jnp.arctanh),
    "Abs": (13, jnp.abs),
    "Neg": (13, jnp.negative),
    "Sign": (13, jnp.sign),
}


def _unary(ctx, x):
    return _SIMPLE[ctx.op_type][1](x)


for _op, (_since, _) in _SIMPLE.items():
    _unary = importer(_op, since=_since)(_unary)


@importer("Reciprocal", since=13)
def reciprocal(ctx, x):
    return jnp.reciprocal(x)


@importer("IsNaN", since=20)
def isnan(ctx, x):
    return jnp.isnan(x)


@importer("IsInf", since=20)
def isinf(ctx, x, *, detect_negative, detect_positive):
    if detect_negative and detect_positive:
        return jnp.isinf(x)
    if detect_negative:
        return jnp.isneginf(x)
    if detect_positive:
        return jnp.isposinf(x)
    return jnp.zeros(x.shape, dtype=bool)
