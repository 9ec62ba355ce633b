"""Bitwise Not/And/Or/Xor and BitShift on integer tensors."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer


@importer("BitwiseNot", since=18)
def bitwise_not(ctx, x):
    return jnp.bitwise_not(x)


_BITWISE = {"BitwiseAnd": jnp.bitwise_and, "BitwiseOr": jnp.bitwise_or, "BitwiseXor": jnp.bitwise_xor}


@importer("BitwiseAnd", since=18)
@importer("BitwiseOr", since=18)
@importer("BitwiseXor", since=18)
def bitwise(ctx, a, b):
    return _BITWISE[ctx.op_type](a, b)


@importer("BitShift", since=28)
def bit_shift(ctx, x, y, *, direction):
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be 'LEFT' or 'RIGHT', got {direction!r}")
    bits = jnp.dtype(x.dtype).itemsize * 8
    y = y.astype(x.dtype)
    # a negative or too large shift leaves only the sign fill: -1 (right, negative x) or 0
    invalid = (y < 0) | (y >= bits) if jnp.issubdtype(x.dtype, jnp.signedinteger) else y >= bits
    safe = jnp.where(invalid, jnp.zeros((), x.dtype), y)
    zero = jnp.zeros((), x.dtype)
    if direction == "LEFT":
        return jnp.where(invalid, zero, jnp.left_shift(x, safe))
    fill = jnp.where(x < 0, jnp.asarray(-1).astype(x.dtype), zero) if jnp.issubdtype(x.dtype, jnp.signedinteger) else zero
    return jnp.where(invalid, fill, jnp.right_shift(x, safe))
