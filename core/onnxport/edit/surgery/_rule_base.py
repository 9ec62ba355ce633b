"""The rule table of size analysis and the helpers its rules share."""

from __future__ import annotations

from collections.abc import Callable

import onnx_ir as ir

from ..graph import _outer_reads
from ._model import const_array
from .groups import Analysis

Rule = Callable[[Analysis, ir.Node], None]
RULES: dict[str, Rule] = {}


def rule(*ops: str) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        for op in ops:
            RULES[op] = fn
        return fn
    return deco


def _opaque(a: Analysis, node: ir.Node, reason: str) -> None:
    for v in _outer_reads(node):
        for layout in a.tracked(v).values():
            a.fix(layout, reason)


def _attr(node: ir.Node, name: str, default=None):
    at = node.attributes.get(name)
    return default if at is None else at.value


def _input(node: ir.Node, i: int) -> ir.Value | None:
    return node.inputs[i] if len(node.inputs) > i else None


def _ints(a: Analysis, node: ir.Node, attr: str, index: int) -> list[int] | None:
    """An int list given as attribute ``attr`` (older opsets) or constant input ``index``."""
    if attr in node.attributes:
        return [int(x) for x in _attr(node, attr)]
    v = _input(node, index)
    arr = const_array(v)
    return None if arr is None else [int(x) for x in arr.reshape(-1)]


def _out_rank(a: Analysis, node: ir.Node) -> int | None:
    return a.rank(node.outputs[0])


def _pass(a: Analysis, src: ir.Value, dst: ir.Value, axes: set[int] | None = None) -> None:
    for ax, lay in list(a.tracked(src).items()):
        if axes is None or ax in axes:
            a.set_layout(dst, ax, lay)
