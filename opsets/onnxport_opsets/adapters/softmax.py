"""Softmax, LogSoftmax, Hardmax before 13 coerce the input to 2-D at ``axis`` (1 and 11 alike)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from .._base import adapter, attr


@adapter("Softmax", 11)
@adapter("LogSoftmax", 11)
@adapter("Hardmax", 11)
def softmax_to_13(node, ctx):
    x = node.inputs[0]
    axis = attr(node, "axis", 1)
    rank = len(x.shape) if x.shape is not None else None
    if rank is not None and (axis == -1 or axis == rank - 1):
        return ctx.rebuild(node, attributes={"axis": -1})
    if rank is not None and -rank <= axis < rank:
        # the 2-D view at axis spans the dims from axis on: with at most one of them not 1
        # (a [N, C, 1, 1] classifier head), the op along that dim alone is the same
        start = axis + rank if axis < 0 else axis
        tail = list(x.shape)[start:]
        if all(isinstance(d, int) for d in tail):
            wide = [start + i for i, d in enumerate(tail) if d != 1]
            if len(wide) <= 1:
                return ctx.rebuild(node, attributes={"axis": wide[0] if wide else start})
    # general case: Flatten to 2-D at axis, op on the last axis, reshape back
    name = node.name or node.op_type
    flat = ir.node("Flatten", [x], attributes={"axis": axis}, name=f"{name}_flatten")
    op = ir.node(node.op_type, [flat.outputs[0]], attributes={"axis": -1}, name=name)
    dims = list(x.shape) if x.shape is not None else None
    if dims is not None and all(isinstance(d, int) for d in dims):
        # a static shape stays a constant: the graph keeps no runtime shape arithmetic
        shape = None
        target = ctx.constant(np.asarray(dims, np.int64), f"{name}_shape")
    else:
        shape = ir.node("Shape", [x], name=f"{name}_shape")
        target = shape.outputs[0]
    back = ir.node("Reshape", [op.outputs[0], target], name=f"{name}_reshape")
    from onnxport.importing.plan import VERSION_KEY
    from onnxport.plugin.spec import latest_version

    nodes = [n for n in (flat, op, shape, back) if n is not None]
    for n in nodes:
        n.meta[VERSION_KEY] = latest_version(n.op_type)
    op.meta["onnxport.adapted"] = True
    ctx.replace(node, nodes, [back.outputs[0]])
    return op
