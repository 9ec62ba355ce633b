"""Declared import cases that follow from ONNX semantics alone, so every backend runs them.

An op without an official node case (and that no runtime implements at its newest version)
gets its hand-computed cases here, keyed by ``(domain, op_type, since)``, not next to one
backend's primitive: each installed backend's primitive for that op version is tested with them,
together with the cases its own decorator declares (:func:`cases_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from onnxport.registry import ImportCase

#: (domain, op_type, since) -> cases every backend's primitive for it runs
SEMANTIC_CASES: Mapping[tuple[str, str, int], tuple[ImportCase, ...]] = {
    # no official node case and no runtime implements GlobalLpPool-22: small hand-computed cases
    ("", "GlobalLpPool", 22): (
        ImportCase((np.array([[[[3.0, 4.0]], [[-6.0, 8.0]]]], np.float32),), {"p": 2},
                   expected=(np.array([[[[5.0]], [[10.0]]]], np.float32),), name="p2"),
        ImportCase((np.array([[[1.0, -1.0, 2.0]]], np.float32),), {"p": 1},
                   expected=(np.array([[[4.0]]], np.float32),), name="p1_1d"),
    ),
}


def cases_of(prim: Any) -> tuple[ImportCase, ...]:
    """The declared cases of an import primitive: its own, then the ONNX-semantic ones."""
    return tuple(prim.cases) + SEMANTIC_CASES.get(prim.key, ())
