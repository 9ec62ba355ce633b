"""Output comparison with stated tolerances per dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

#: (rtol, atol) per numpy dtype name; integer, bool and float8 values compare exactly.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-9),
    "float32": (1e-3, 1e-5),
    "float16": (1e-2, 5e-3),  # composite ops (Attention, GridSample) round differently per runtime
    "bfloat16": (2e-2, 1e-2),
    "complex64": (1e-3, 1e-5),
    "complex128": (1e-7, 1e-9),
}


def tolerance(dtype: np.dtype, rtol: float | None = None, atol: float | None = None) -> tuple[float, float]:
    r, a = TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))
    return (r if rtol is None else rtol, a if atol is None else atol)


def _values(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.name.startswith(("float8", "bfloat16", "float4")):
        return arr.astype(np.float32)
    if arr.dtype.name in ("int4", "uint4", "int2", "uint2"):
        return arr.astype(np.int16)
    return arr


def compare_outputs(expected: Any, actual: Any, *, name: str = "output", rtol: float | None = None,
                    atol: float | None = None, check_dtype: bool = True) -> None:
    """Raise AssertionError naming the first mismatch between expected and actual values."""
    if isinstance(expected, list) or expected is None:
        if expected is None:
            assert actual is None, f"{name}: expected None (empty optional), got {type(actual).__name__}"
            return
        assert isinstance(actual, (list, tuple)), f"{name}: expected a sequence, got {type(actual).__name__}"
        assert len(expected) == len(actual), f"{name}: sequence length {len(actual)} != {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare_outputs(e, a, name=f"{name}[{i}]", rtol=rtol, atol=atol, check_dtype=check_dtype)
        return
    e = np.asarray(expected)
    a = np.asarray(actual)
    if check_dtype and e.dtype != a.dtype:
        raise AssertionError(f"{name}: dtype {a.dtype} != expected {e.dtype}")
    if e.shape != a.shape:
        raise AssertionError(f"{name}: shape {a.shape} != expected {e.shape}")
    if e.dtype.kind in "SUO":
        if not np.array_equal(e.astype(str), a.astype(str)):
            raise AssertionError(f"{name}: string values differ")
        return
    ev, av = _values(e), _values(a)
    r, t = tolerance(e.dtype, rtol, atol)
    if ev.dtype.kind in "fc":
        nan_e, nan_a = np.isnan(ev), np.isnan(av)
        if not np.array_equal(nan_e, nan_a):
            raise AssertionError(f"{name}: NaN positions differ")
        ok = np.isclose(av, ev, rtol=r, atol=t, equal_nan=True)
    else:
        ok = av == ev
    if not np.all(ok):
        bad = np.argwhere(~ok)
        idx = tuple(bad[0])
        diff = np.abs(av.astype(np.float64) - ev.astype(np.float64)) if ev.dtype.kind != "b" else ok
        raise AssertionError(
            f"{name}: {len(bad)} of {ev.size} values differ (rtol={r}, atol={t}); first at {idx}: "
            f"got {av[idx]!r}, expected {ev[idx]!r}; max abs diff {np.nanmax(diff) if ev.dtype.kind != 'b' else 'n/a'}"
        )
