"""A model imported with ``x64=False``: its 64-bit types computed in 32 bits, as JAX computes
every 64-bit request with ``jax_enable_x64`` off.

Constants are folded exactly (in 64 bits, at import and trace time); a constant that a runtime
node reads is narrowed to 32 bits when that keeps its meaning (:mod:`onnxport.importing.narrow`), and
otherwise refused with :class:`NeedsX64Error`, which names the value and the fix. Inputs may
come in their 32-bit form; a 64-bit input whose values 32 bits cannot hold is refused.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from onnxport.errors import ConversionError, InputError
from onnxport.importing.narrow import narrow_dtype, needs_64_bits

#: how to get 64-bit arithmetic back
X64_FIX = ("enable 64-bit types (jax.config.update('jax_enable_x64', True), or call inside "
           "`with jax.enable_x64(True):`) and import with x64='auto'")


class NeedsX64Error(ConversionError):
    """A value of a model imported with ``x64=False`` needs 64 bits: an int64 constant beyond
    the int32 range that is no size or index, or a float64 value that float32 turns into
    infinity or zero."""


class NeedsX64InputError(NeedsX64Error, InputError):
    """An input's values need 64 bits but the model computes in 32 (``x64=False``)."""


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Where a narrowed model runs: ``jax_enable_x64`` off, JAX's notes on each 64-bit request
    it narrows silenced (narrowing is what the model was imported for)."""
    with jax.enable_x64(False), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Explicitly requested dtype", category=UserWarning)
        yield


def _is_wide(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) and narrow_dtype(x.dtype) != x.dtype


def narrow_array(kind: str, name: str, arr: np.ndarray) -> jax.Array:
    """A param/state/const array in its 32-bit form (refused if its values need 64 bits)."""
    if _is_wide(arr):
        why = needs_64_bits(arr)
        if why is not None:
            raise NeedsX64Error(f"{kind} {name!r} ({arr.dtype}) needs 64 bits: {why}; the model was "
                                f"imported with x64=False and computes in 32 bits; {X64_FIX}")
        arr = np.asarray(arr).astype(narrow_dtype(arr.dtype))
    return jnp.asarray(arr)


def narrow_input(name: str, want: np.dtype | None, x: Any) -> Any:
    """Input ``name`` (declared ``want``) in the 32-bit form the model computes with: a 64-bit
    array is narrowed when its values fit (checked where they are concrete), else refused."""
    if want is None or narrow_dtype(want) == want:
        return x
    small = narrow_dtype(want)
    got = getattr(x, "dtype", None)
    if got is None or np.dtype(got) == small:
        return x
    if np.dtype(got) != np.dtype(want):
        return x  # a wrong type: the dtype check names it
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
    elif isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer):
        arr = np.asarray(x)
    else:
        return x.astype(small)  # traced: its values are unknown here
    why = needs_64_bits(arr)
    if why is not None:
        raise NeedsX64InputError(f"input {name!r} ({arr.dtype}) needs 64 bits: {why}; the model was "
                                 f"imported with x64=False and computes in 32 bits; {X64_FIX}")
    return jnp.asarray(arr.astype(small))
