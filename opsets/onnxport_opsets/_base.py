"""The ``@adapter`` marker and helpers adapters share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir

from onnxport.importing.plan import AdaptContext

_MARK = "__onnxport_adapter__"


def adapter(op_type: str, *from_versions: int, domain: str = "") -> Callable[[Callable], Callable]:
    """Mark ``fn(node, ctx) -> node | None`` as the adapter from each of ``from_versions``.

    The adapter rewrites a node of that schema version into the op's next schema version
    (or, for a deprecated op, into its replacement op).
    """

    def mark(fn: Callable) -> Callable:
        marks = list(getattr(fn, _MARK, []))
        marks.extend((op_type, v, domain) for v in from_versions)
        setattr(fn, _MARK, marks)
        return fn

    return mark


def attr(node: ir.Node, name: str, default: Any = None) -> Any:
    """A node attribute's plain value, or ``default``."""
    a = node.attributes.get(name)
    if a is None:
        return default
    v = a.value
    return list(v) if isinstance(v, tuple) else v


def ints_input(ctx: AdaptContext, node: ir.Node, name: str, values: Any) -> ir.Value:
    """A new int64 constant input named after the node."""
    return ctx.constant(np.asarray(values, dtype=np.int64), f"{node.name or node.op_type}_{name}")


def attr_to_input(node: ir.Node, ctx: AdaptContext, attr_name: str, index: int, *, dtype=np.int64, keep_missing: bool = True) -> ir.Node:
    """Move attribute ``attr_name`` into input ``index`` (as a constant)."""
    value = attr(node, attr_name)
    inputs = list(node.inputs)
    while len(inputs) < index:
        inputs.append(None)
    if value is not None:
        const = ctx.constant(np.asarray(value, dtype=dtype), f"{node.name or node.op_type}_{attr_name}")
        if len(inputs) == index:
            inputs.append(const)
        else:
            inputs[index] = const
    return ctx.rebuild(node, inputs=inputs, drop=(attr_name,))
