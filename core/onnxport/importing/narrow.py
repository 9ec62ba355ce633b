"""Running a model's 64-bit values in 32 bits: which values keep their meaning, which need 64 bits.

A backend that computes ``int64``/``float64`` in 32-bit types (JAX with ``jax_enable_x64`` off)
narrows every constant a runtime node reads. A value that 32 bits hold exactly narrows safely.
A size- or index-like input (a Slice end of ``INT64_MAX``, a Loop's trip count, Clip bounds on
integers) may be clamped to the 32-bit range: every dimension and index then fits 32 bits, so
the clamped value selects the same elements. Any other value out of range needs 64 bits.
"""

from __future__ import annotations

import numpy as np

#: ``{op_type: input indices}`` whose integer values are sizes, indices or bounds that may be
#: clamped to the 32-bit range without changing the result (no data flows through them)
CLAMPABLE_INPUTS: dict[str, frozenset[int]] = {
    "Slice": frozenset({1, 2, 3, 4}),  # starts, ends, axes, steps (INT64_MAX/MIN mean "to the end")
    "Clip": frozenset({1, 2}),  # integer bounds: clipping to [INT64_MIN, INT64_MAX] is no clip
    "Loop": frozenset({0}),  # trip count: INT64_MAX means "until the condition stops it"
    "Trilu": frozenset({1}),  # diagonal offset
    "TopK": frozenset({1}),
    "NonMaxSuppression": frozenset({2}),  # max boxes per class
    "Pad": frozenset({3}),  # axes
    "Split": frozenset({1}),
    "Unsqueeze": frozenset({1}),
    "Squeeze": frozenset({1}),
    "ReduceSum": frozenset({1}), "ReduceMean": frozenset({1}), "ReduceMax": frozenset({1}),
    "ReduceMin": frozenset({1}), "ReduceProd": frozenset({1}), "ReduceL1": frozenset({1}),
    "ReduceL2": frozenset({1}), "ReduceLogSum": frozenset({1}), "ReduceLogSumExp": frozenset({1}),
    "ReduceSumSquare": frozenset({1}),
}


def clampable(op_type: str, index: int) -> bool:
    """Whether input ``index`` of ``op_type`` is size/index-like (see :data:`CLAMPABLE_INPUTS`)."""
    return index in CLAMPABLE_INPUTS.get(op_type, ())


def narrow_dtype(dtype: np.dtype) -> np.dtype:
    """The 32-bit type a 64-bit numpy dtype runs as (others unchanged)."""
    dtype = np.dtype(dtype)
    return {"int64": np.dtype(np.int32), "uint64": np.dtype(np.uint32), "float64": np.dtype(np.float32),
            "complex128": np.dtype(np.complex64)}.get(dtype.name, dtype)


def needs_64_bits(arr: np.ndarray) -> str | None:
    """Why the 32-bit form of ``arr`` would not hold its values (None: it does).

    Integers must lie in the 32-bit range. Floats may round (as JAX rounds every float64 it is
    given with x64 off) but not overflow to infinity or flush a nonzero value to zero.
    """
    arr = np.asarray(arr)
    small = narrow_dtype(arr.dtype)
    if small == arr.dtype or arr.size == 0:
        return None
    if arr.dtype.kind in "iu":
        info = np.iinfo(small)
        lo, hi = arr.min(), arr.max()
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            return f"{bad} lies outside {small}'s range [{info.min}, {info.max}]"
        return None
    parts = [arr.real, arr.imag] if arr.dtype.kind == "c" else [arr]
    finfo = np.finfo(narrow_dtype(parts[0].dtype))
    for part in parts:
        finite = part[np.isfinite(part)]
        if finite.size == 0:
            continue
        big = np.abs(finite).max()
        if big > finfo.max:
            return f"{big:g} overflows {finfo.dtype} (largest {finfo.max:g})"
        tiny = np.abs(finite[finite != 0])
        if tiny.size and tiny.min() < float(finfo.smallest_subnormal) / 2:
            return f"{tiny.min():g} rounds to zero in {finfo.dtype}"
    return None


def clamp_to_32_bits(arr: np.ndarray) -> np.ndarray:
    """An integer array clamped to its 32-bit type's range (same dtype)."""
    info = np.iinfo(narrow_dtype(np.asarray(arr).dtype))
    return np.clip(arr, info.min, info.max).astype(np.asarray(arr).dtype)
