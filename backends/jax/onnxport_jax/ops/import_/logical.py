"""Boolean logic (Not, And, Or, Xor) and comparisons (Equal, Greater, Less ...)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer


@importer("Not", since=1)
def not_(ctx, x):
    return jnp.logical_not(x)


_LOGIC = {"And": jnp.logical_and, "Or": jnp.logical_or, "Xor": jnp.logical_xor}


@importer("And", since=7)
@importer("Or", since=7)
@importer("Xor", since=7)
def logic(ctx, a, b):
    return _LOGIC[ctx.op_type](a, b)


_COMPARE = {
    "Equal": (jnp.equal, np.equal),
    "Greater": (jnp.greater, np.greater),
    "GreaterOrEqual": (jnp.greater_equal, np.greater_equal),
    "Less": (jnp.less, np.less),
    "LessOrEqual": (jnp.less_equal, np.less_equal),
}


def _is_text(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "OSU"


@importer("Equal", since=19)
@importer("Greater", since=13)
@importer("GreaterOrEqual", since=16)
@importer("Less", since=13)
@importer("LessOrEqual", since=16)
def compare(ctx, a, b):
    jfn, nfn = _COMPARE[ctx.op_type]
    if _is_text(a) or _is_text(b):  # string tensors stay numpy
        return nfn(np.asarray(a).astype(str), np.asarray(b).astype(str))
    return jfn(a, b)
