"""Reduce*: ``axes`` moved from an input (opset 18) back to an attribute."""

from __future__ import annotations

import onnx_ir as ir

from . import DownContext, const_ints, down

_OPS = ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")


def axes_to_attribute(node: ir.Node, ctx: DownContext) -> None:
    """``Reduce*(x, axes)`` -> ``Reduce*(x, axes=[...])``."""
    axes = const_ints(node.inputs[1] if len(node.inputs) > 1 else None, node)
    attrs = {k: a.value for k, a in node.attributes.items()}
    if axes is not None:
        attrs["axes"] = axes
    attrs.pop("noop_with_empty_axes", None)
    out = ctx.op(node.op_type, node.inputs[0], **attrs)
    ctx.replace(node, [out])


for _op in _OPS:
    down(_op, below=18)(axes_to_attribute)
