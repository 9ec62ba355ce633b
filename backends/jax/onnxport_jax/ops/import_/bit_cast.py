"""BitCast (opset 26): reinterpret the bits of a tensor as another type of the same width."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ._static import np_dtype, xp


@importer("BitCast", since=26)
def bit_cast(ctx, x, *, to):
    """Same shape, same bytes, new dtype ``to``; a width change is refused."""
    target = np_dtype(to)
    src = np.dtype(x.dtype)
    if src.kind in "OSU" or target.kind in "OSU":
        raise ctx.error("BitCast to or from strings is undefined")
    if src.itemsize != target.itemsize:
        raise ctx.error(f"BitCast from {src} to {target} changes the bit width")
    if xp(x) is np:
        return np.asarray(x).view(target)
    if src == np.bool_:  # XLA has no bool bitcast; a bool byte is 0 or 1
        x = x.astype(jnp.uint8)
        if target == np.uint8:
            return x
    if target == np.bool_:
        return lax.bitcast_convert_type(x, jnp.uint8) != 0
    return lax.bitcast_convert_type(x, target)
