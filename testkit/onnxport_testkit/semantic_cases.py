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

# no official node case uses SequenceErase or ConcatFromSequence: declared cases, onnxruntime decides
_SEQ = [np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * k for k in range(3)]

#: (domain, op_type, since) -> cases every backend's primitive for it runs
SEMANTIC_CASES: Mapping[tuple[str, str, int], tuple[ImportCase, ...]] = {
    # no official node case and no runtime implements GlobalLpPool-22: small hand-computed cases
    ("", "GlobalLpPool", 22): (
        ImportCase((np.array([[[[3.0, 4.0]], [[-6.0, 8.0]]]], np.float32),), {"p": 2},
                   expected=(np.array([[[[5.0]], [[10.0]]]], np.float32),), name="p2"),
        ImportCase((np.array([[[1.0, -1.0, 2.0]]], np.float32),), {"p": 1},
                   expected=(np.array([[[4.0]]], np.float32),), name="p1_1d"),
    ),
    ("", "SequenceErase", 11): (
        ImportCase((_SEQ,), name="last"),
        ImportCase((_SEQ, np.array(0, np.int64)), name="first"),
        ImportCase((_SEQ, np.array(-2, np.int32)), name="negative"),
    ),
    ("", "ConcatFromSequence", 11): (
        ImportCase((_SEQ,), {"axis": 1}, name="concat"),
        ImportCase((_SEQ,), {"axis": -1, "new_axis": 1}, name="stack_last"),
        ImportCase((_SEQ[:1],), {"axis": 0, "new_axis": 1}, name="stack_one"),
    ),
}


def cases_of(prim: Any) -> tuple[ImportCase, ...]:
    """The declared cases of an import primitive: its own, then the ONNX-semantic ones."""
    return tuple(prim.cases) + SEMANTIC_CASES.get(prim.key, ())
