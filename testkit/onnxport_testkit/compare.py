"""Output comparison with stated tolerances per dtype."""

from __future__ import annotations

from typing import Any

import numpy as np


class Mismatch(AssertionError):
    """Outputs differ in value, shape, dtype or count: the ``mismatch`` of an expected failure."""


#: (rtol, atol) per numpy dtype name; integer, bool and float8 values compare exactly. float32 is
#: about what onnxruntime and a framework differ by for an element-wise op or a short reduction; an
#: op that differs by more declares its own tolerance beside its primitive (see
#: :func:`declared_tolerances`).
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-9),
    "float32": (1e-5, 1e-6),
    "float16": (1e-2, 5e-3),  # composite ops (Attention, GridSample) round differently per runtime
    "bfloat16": (2e-2, 1e-2),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-7, 1e-9),
}


#: the name of the module-level table, in a primitive's module, of its declared tolerances:
#: ``{op_type or export target: {dtype name: (rtol, atol, reason)}}``
TABLE_NAME = "TEST_TOLERANCES"


def tolerance(dtype: np.dtype, rtol: float | None = None, atol: float | None = None,
              overrides: dict[str, tuple[float, float]] | None = None) -> tuple[float, float]:
    name = np.dtype(dtype).name
    r, a = (overrides or {}).get(name) or TOLERANCES.get(name, (0.0, 0.0))
    return (r if rtol is None else rtol, a if atol is None else atol)


def declared_tolerances(fns_and_keys: list[tuple[Any, str]]) -> dict[str, tuple[float, float]]:
    """Per dtype, the loosest tolerance declared for any of ``(primitive function, key)``.

    A primitive's module may hold ``TEST_TOLERANCES = {"Conv": {"float32": (1e-4, 1e-5, "why")}}``;
    an entry without a reason (a third item that is a non-empty string) is an error.
    """
    import sys

    out: dict[str, tuple[float, float]] = {}
    for fn, key in fns_and_keys:
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        table = getattr(module, TABLE_NAME, None) or {}
        for dtype, entry in (table.get(key) or {}).items():
            if len(entry) != 3 or not isinstance(entry[2], str) or not entry[2].strip():
                raise ValueError(f"{module.__name__}.{TABLE_NAME}[{key!r}][{dtype!r}] needs (rtol, atol, reason)")
            r, a = out.get(dtype, (0.0, 0.0))
            out[dtype] = (max(r, float(entry[0])), max(a, float(entry[1])))
    return out


def _values(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.name.startswith(("float8", "bfloat16", "float4")):
        return arr.astype(np.float32)
    if arr.dtype.name in ("int4", "uint4", "int2", "uint2"):
        return arr.astype(np.int16)
    return arr


def compare_outputs(expected: Any, actual: Any, *, name: str = "output", rtol: float | None = None,
                    atol: float | None = None, check_dtype: bool = True,
                    overrides: dict[str, tuple[float, float]] | None = None) -> None:
    """Raise AssertionError naming the first mismatch between expected and actual values."""
    if isinstance(expected, list) or expected is None:
        if expected is None:
            if actual is not None:
                raise Mismatch(f"{name}: expected None (empty optional), got {type(actual).__name__}")
            return
        if not isinstance(actual, (list, tuple)):
            raise Mismatch(f"{name}: expected a sequence, got {type(actual).__name__}")
        if len(expected) != len(actual):
            raise Mismatch(f"{name}: sequence length {len(actual)} != {len(expected)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare_outputs(e, a, name=f"{name}[{i}]", rtol=rtol, atol=atol, check_dtype=check_dtype,
                            overrides=overrides)
        return
    e = np.asarray(expected)
    a = np.asarray(actual)
    if check_dtype and e.dtype != a.dtype:
        raise Mismatch(f"{name}: dtype {a.dtype} != expected {e.dtype}")
    if e.shape != a.shape:
        raise Mismatch(f"{name}: shape {a.shape} != expected {e.shape}")
    if e.dtype.kind in "SUO":
        if not np.array_equal(e.astype(str), a.astype(str)):
            raise Mismatch(f"{name}: string values differ")
        return
    ev, av = _values(e), _values(a)
    r, t = tolerance(e.dtype, rtol, atol, overrides)
    if ev.dtype.kind in "fc":
        nan_e, nan_a = np.isnan(ev), np.isnan(av)
        if not np.array_equal(nan_e, nan_a):
            raise Mismatch(f"{name}: NaN positions differ")
        ok = np.isclose(av, ev, rtol=r, atol=t, equal_nan=True)
    else:
        ok = av == ev
    if not np.all(ok):
        bad = np.argwhere(~ok)
        idx = tuple(bad[0])
        diff = np.abs(av.astype(np.float64) - ev.astype(np.float64)) if ev.dtype.kind != "b" else ok
        raise Mismatch(
            f"{name}: {len(bad)} of {ev.size} values differ (rtol={r}, atol={t}); first at {idx}: "
            f"got {av[idx]!r}, expected {ev[idx]!r}; max abs diff {np.nanmax(diff) if ev.dtype.kind != 'b' else 'n/a'}"
        )
