"""The steps of a model imported with ``x64=False``: folded in 64 bits, run in 32, and the check
at import that refuses what 32 bits would change (see :mod:`onnxport_jax.narrow`)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from onnxport.errors import ConversionError
from onnxport.importing.narrow import clamp_to_32_bits, clampable, narrow_dtype, needs_64_bits
from onnxport.importing.program import Step, iter_steps

from . import dtypes
from .model import _Step, _to_numpy, is_static_result
from .narrow import X64_FIX, NeedsX64Error, _is_wide


def _np(dtype: Any) -> np.dtype:
    try:
        return dtypes.to_numpy_dtype(dtype)
    except ConversionError:
        return np.dtype(object)


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
