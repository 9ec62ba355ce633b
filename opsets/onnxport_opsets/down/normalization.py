"""LayerNormalization (opset 17) written with elementary ops for older opsets."""

from __future__ import annotations

import onnx_ir as ir

from . import DownContext, down


@down("LayerNormalization", below=17)
def layer_normalization(node: ir.Node, ctx: DownContext) -> None:
    """``(x - mean) / sqrt(var + eps) * scale + bias`` over the axes from ``axis`` on."""
    x, scale = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    if any(u is not None and (u.uses() or u.is_graph_output()) for u in node.outputs[1:]):
        raise ValueError(f"node {node.name!r}: LayerNormalization's mean/inv_std outputs need opset 17")
    axis = node.attributes["axis"].value if "axis" in node.attributes else -1
    eps = node.attributes["epsilon"].value if "epsilon" in node.attributes else 1e-5
    rank = len(x.shape) if x.shape is not None else None
    if axis < 0:
        if rank is None:
            raise ValueError(f"node {node.name!r}: a negative axis needs a known rank below opset 17")
        axis += rank
    if rank is None:
        raise ValueError(f"node {node.name!r}: the input rank must be known below opset 17")
    axes = list(range(axis, rank))
    np_dtype = x.dtype.numpy() if x.dtype is not None else None
    mean = ctx.op("ReduceMean", x, axes=axes, keepdims=1)
    centered = ctx.op("Sub", x, mean)
    var = ctx.op("ReduceMean", ctx.op("Mul", centered, centered), axes=axes, keepdims=1)
    denom = ctx.op("Sqrt", ctx.op("Add", var, ctx.const(eps, np_dtype)))
    out = ctx.op("Mul", ctx.op("Div", centered, denom), scale)
    if bias is not None:
        out = ctx.op("Add", out, bias)
    ctx.replace(node, [out])
