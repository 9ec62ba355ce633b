"""Seeded random inputs and the ImportCase helper every case module uses."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from onnxport import ImportCase

#: the float types onnxruntime's contrib kernels take on CPU, by case-name suffix
FLOATS = {"f32": np.float32, "f16": np.float16}


def rng(name: str) -> np.random.Generator:
    """A generator seeded from the case's name: the same inputs on every machine and run."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(gen: np.random.Generator, shape: Sequence[int], dtype: Any, scale: float = 1.0) -> np.ndarray:
    """Standard normal values times ``scale``, rounded to ``dtype``."""
    return (gen.standard_normal(tuple(shape)) * scale).astype(dtype)


def case(name: str, inputs: Sequence[Any], attributes: dict[str, Any] | None = None, *, num_outputs: int = 1,
         reference: Callable[..., Any] | None = None) -> ImportCase:
    """An ImportCase (``None`` inputs are missing optional inputs); tolerances come from the
    family's ``TEST_TOLERANCES``, per dtype."""
    return ImportCase(tuple(inputs), dict(attributes or {}), reference=reference, num_outputs=num_outputs, name=name)


def tolerances(ops: Sequence[str], table: dict[str, tuple[float, float, str]]) -> dict[str, dict[str, tuple[float, float, str]]]:
    """``TEST_TOLERANCES`` for several ops with the same per-dtype table."""
    return {op: dict(table) for op in ops}
