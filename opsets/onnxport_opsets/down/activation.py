"""Gelu (opset 20) and HardSwish (opset 14) written with older ops."""

from __future__ import annotations

import math

import onnx_ir as ir

from . import DownContext, down


def _dtype(v: ir.Value):
    return v.dtype.numpy() if v.dtype is not None else None


@down("Gelu", below=20)
def gelu(node: ir.Node, ctx: DownContext) -> None:
    """Exact: ``x * 0.5 * (1 + erf(x / sqrt 2))``; tanh: the tanh approximation."""
    x = node.inputs[0]
    dt = _dtype(x)
    approx = node.attributes["approximate"].value if "approximate" in node.attributes else "none"
    half = ctx.const(0.5, dt)
    one = ctx.const(1.0, dt)
    if approx == "tanh":
        cube = ctx.op("Mul", ctx.op("Mul", x, x), x)
        inner = ctx.op("Add", x, ctx.op("Mul", cube, ctx.const(0.044715, dt)))
        t = ctx.op("Tanh", ctx.op("Mul", inner, ctx.const(math.sqrt(2.0 / math.pi), dt)))
    else:
        t = ctx.op("Erf", ctx.op("Div", x, ctx.const(math.sqrt(2.0), dt)))
    out = ctx.op("Mul", ctx.op("Mul", x, half), ctx.op("Add", t, one))
    ctx.replace(node, [out])


@down("HardSwish", below=14)
def hard_swish(node: ir.Node, ctx: DownContext) -> None:
    """``x * HardSigmoid(x, alpha=1/6, beta=0.5)``."""
    x = node.inputs[0]
    out = ctx.op("Mul", x, ctx.op("HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5))
    ctx.replace(node, [out])
