"""A model imported with ``x64=False``: its 64-bit types computed in 32 bits, as JAX computes
every 64-bit request with ``jax_enable_x64`` off.

Constants are folded exactly (in 64 bits, at import and trace time); a constant that a runtime
node reads is narrowed to 32 bits when that keeps its meaning (:mod:`onnxport.narrow`), and
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
from onnxport.narrow import clamp_to_32_bits, clampable, narrow_dtype, needs_64_bits
from onnxport.program import Step, iter_steps

from . import dtypes
from .model import _Step, _to_numpy, is_static_result

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


def _np(dtype: Any) -> np.dtype:
    try:
        return dtypes.to_numpy_dtype(dtype)
    except ConversionError:
        return np.dtype(object)


def _is_wide(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) and narrow_dtype(x.dtype) != x.dtype


class NarrowStep(_Step):
    """A node of an ``x64=False`` model: folds in 64 bits, runs in 32 (constant args checked)."""

    __slots__ = ()

    def fold(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        with jax.enable_x64(True), jax.ensure_compile_time_eval():
            outs = Step.call(self, args, attrs)
        return [_to_numpy(o) if is_static_result(o) else o for o in outs]

    def call(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        return super().call([self.narrowed(i, a) for i, a in enumerate(args)], attrs)

    def narrowed(self, i: int, a: Any) -> Any:
        """Argument ``i`` as this node reads it in 32 bits: a constant that 32 bits hold, or a
        clamped size/index; raises :class:`NeedsX64Error` for one that needs 64 bits."""
        if isinstance(a, (list, tuple)):
            return type(a)(self.narrowed(i, e) for e in a)
        if not _is_wide(a):
            return a
        why = needs_64_bits(a)
        if why is None:
            return a
        if a.dtype.kind in "iu" and clampable(self.ctx.op_type, i):
            return clamp_to_32_bits(a)
        v = self.inputs[i] if i < len(self.inputs) else None
        name = getattr(v, "name", None) or f"input {i}"
        raise NeedsX64Error(
            f"node {self.ctx.label}: constant {name!r} ({a.dtype}) needs 64 bits: {why}; the model "
            f"was imported with x64=False and computes in 32 bits; {X64_FIX}"
        )


#: ops whose result depends on the bit width of their 64-bit operands or results
WIDTH_OPS = frozenset({"BitCast"})
#: ops whose outputs are concrete whenever their input's shape is (always, under JAX)
SHAPE_OPS = frozenset({"Shape", "Size"})


def check_program(program: Any, static: dict[Any, Any]) -> None:
    """Refuse, at import, what computes differently in 32 bits: a constant that a runtime node
    of ``program`` (subgraphs included) reads and that needs 64 bits (:meth:`NarrowStep.call`
    narrows the rest at each call), a bit-level op on a 64-bit type (BitCast). A node computed
    from shapes and constants alone folds at each call (JAX shapes are concrete when traced), in
    64 bits: it reads nothing narrowed."""
    known = set(static)  # values that are concrete at call time
    for step in iter_steps(program):
        if step.ctx.op_type in WIDTH_OPS:
            wide = [v for v in [*step.inputs, *step.outputs] if v is not None and v.dtype is not None
                    and narrow_dtype(_np(v.dtype)) != _np(v.dtype)]
            if wide:
                raise NeedsX64Error(f"node {step.ctx.label}: {step.ctx.op_type} of {wide[0].name!r} "
                                    f"({wide[0].dtype.name}) reads or writes 64-bit patterns, which 32 "
                                    f"bits change; the model was imported with x64=False; {X64_FIX}")
        if step.foldable and (step.ctx.op_type in SHAPE_OPS
                              or all(v is None or v in known for v in step.inputs)):
            known.update(v for v in step.outputs if v is not None)
            continue
        for i, v in enumerate(step.inputs):
            if v is not None and v in static:
                step.narrowed(i, static[v])


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
