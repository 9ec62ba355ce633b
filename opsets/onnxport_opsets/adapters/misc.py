"""Small renames and legacy attributes: Scatter, Gemm, MaxPool, Cast."""

from __future__ import annotations

from .._base import adapter, attr


@adapter("Scatter", 11)
def scatter_to_elements(node, ctx):
    return ctx.rebuild(node, op_type="ScatterElements")


@adapter("Gemm", 1, 6)
def gemm_broadcast(node, ctx):
    return ctx.rebuild(node, drop=("broadcast",))


@adapter("Cast", 1)
def cast_string_to(node, ctx):
    to = attr(node, "to")
    if isinstance(to, str):
        import onnx

        code = onnx.TensorProto.DataType.Value(to.upper())
        return ctx.rebuild(node, attributes={"to": code})
    return None
