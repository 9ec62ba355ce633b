"""Editing ONNX models, for every backend: cut, remove, replace and prune nodes (:mod:`.graph`), the
sequential container (:mod:`.sequential`), and size-aligned surgery (:mod:`.surgery`: size groups,
pruning and widening channels, inserting and removing layers).

Every function takes a model in any form :func:`onnxport.load` accepts and returns a new
``onnx_ir.Model``. The sequential container and surgery load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from .graph import extract, linear_order, prune, remove_node, replace_node

#: names loaded on first use -> their module
_LAZY = {
    "to_sequential": ".sequential",
    **dict.fromkeys(
        ["Group", "Segment", "SizeAlignmentError", "SizeGroups", "channel_scores", "insert_layer",
         "prune_channels", "remove_layer", "size_groups", "widen_channels"],
        ".surgery",
    ),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Group", "SizeAlignmentError", "SizeGroups", "channel_scores", "extract", "insert_layer", "linear_order", "prune",
    "prune_channels", "remove_layer", "remove_node", "replace_node", "size_groups", "to_sequential",
    "widen_channels",
]
