"""Matrix products: linear, addmm, baddbmm, mm, bmm, mv, matmul, outer, einsum -> Gemm / MatMul
(+ Add), Mul, Einsum."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch
from torch import nn

from onnxport import Sample, exporter


@exporter(
    "aten.linear.default",
    samples=[
        Sample(nn.Linear(8, 4), (torch.randn(3, 8),), emits=("Gemm",), name="2d"),
        Sample(nn.Linear(8, 4), (torch.randn(2, 5, 8),), emits=("MatMul", "Add"), name="3d"),
        Sample(nn.Linear(8, 4, bias=False), (torch.randn(2, 5, 8),), emits=("MatMul",), name="no_bias"),
    ],
)
def linear(g, x, w, b=None):
    """2-D input: one Gemm (transB); otherwise MatMul with the transposed weight, then Add."""
    if g.rank(x) == 2:
        return g.op("Gemm", x, w, b, transB=1)
    y = g.op("MatMul", x, g.op("Transpose", w, perm=[1, 0]))
    return y if b is None else g.op("Add", y, b)


def _untransposed(v):
    """``(x, 1)`` when the matrix ``v`` is ``Transpose(x)``, else ``(v, 0)``: Gemm reads x transposed."""
    node = v.producer()
    if node is not None and node.op_type == "Transpose" and node.domain in ("", "ai.onnx"):
        perm = node.attributes.get("perm")  # a matrix's only transposition: [1, 0] (the default)
        if perm is None or list(perm.value) == [1, 0]:
            return node.inputs[0], 1
    return v, 0


@exporter(
    "aten.addmm.default",
    samples=[Sample(lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2.0),
                    (torch.randn(4), torch.randn(3, 5), torch.randn(5, 4)), emits=("Gemm",)),
             Sample(lambda b, x, w: torch.addmm(b, x.t(), w.t()), (torch.randn(1, 4), torch.randn(5, 3), torch.randn(4, 5)),
                    emits=("Gemm",), name="transposed"),
             Sample(lambda b, x, y: torch.addmm(b, x, y, beta=0), (torch.full((3, 1), float("nan")), torch.randn(3, 5), torch.randn(5, 4)),
                    emits=("Gemm",), name="beta0")],
)
def addmm(g, bias, m1, m2, *, beta=1, alpha=1):
    """One Gemm: the bias broadcasts to the product (unidirectionally, as in torch); a transposed
    operand is read through transA / transB; beta 0 drops the bias (torch ignores its nan and inf)."""
    a, trans_a = _untransposed(m1)
    b, trans_b = _untransposed(m2)
    flags = {k: 1 for k, on in (("transA", trans_a), ("transB", trans_b)) if on}
    return g.op("Gemm", a, b, None if beta == 0 else bias, alpha=float(alpha), beta=float(beta), **flags)


@exporter(
    "aten.mm.default",
    samples=[Sample(torch.mm, (torch.randn(3, 5), torch.randn(5, 4)), emits=("MatMul",))],
)
@exporter(
    "aten.bmm.default",
    samples=[Sample(torch.bmm, (torch.randn(2, 3, 5), torch.randn(2, 5, 4)), emits=("MatMul",))],
)
@exporter("aten.mv.default", samples=[Sample(torch.mv, (torch.randn(3, 5), torch.randn(5)), emits=("MatMul",))])
@exporter(
    "aten.matmul.default",
    samples=[Sample(torch.matmul, (torch.randn(2, 2, 3, 5), torch.randn(5, 4)), emits=("MatMul",)),
             Sample(torch.matmul, (torch.randn(2, 3, 5), torch.randn(5)), emits=("MatMul",), name="vector")],
)
def matmul(g, a, b):
    """numpy matmul semantics in both frameworks."""
    return g.op("MatMul", a, b)


@exporter(
    "aten.baddbmm.default",
    samples=[Sample(torch.baddbmm, (torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)), emits=("MatMul", "Add")),
             Sample(lambda b, x, y: torch.baddbmm(b, x, y, beta=0.5, alpha=2), (torch.randn(3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)),
                    emits=("MatMul", "Mul", "Add"), name="scaled"),
             Sample(lambda b, x, y: torch.baddbmm(b, x, y, beta=0), (torch.full((1, 3, 5), float("nan")), torch.randn(2, 3, 4), torch.randn(2, 4, 5)),
                    emits=("MatMul",), name="beta0")],
)
def baddbmm(g, bias, b1, b2, *, beta=1, alpha=1):
    """beta * bias + alpha * (b1 @ b2); beta 0 ignores bias (its nan and inf too), as torch."""
    dt = g.out_dtype()
    y = g.op("MatMul", b1, b2)
    if alpha != 1:
        y = g.op("Mul", y, g.scalar(alpha, dt))
    if beta == 0:
        return y
    if beta != 1:
        bias = g.op("Mul", bias, g.scalar(beta, dt))
    return g.op("Add", y, bias)


@exporter(
    "aten.outer.default",
    samples=[Sample(torch.outer, (torch.randn(3), torch.randn(4)), emits=("Mul",)),
             Sample(torch.outer, (torch.arange(3), torch.randn(4)), emits=("Mul", "Cast"), name="mixed")],
)
def outer(g, a, b):
    """a[:, None] * b in the result type (logical and for booleans)."""
    dt = g.out_dtype()
    col = g.op("Unsqueeze", g.cast(a, dt), g.const(np.asarray([1], dtype=np.int64)))
    return g.op("And" if dt == ir.DataType.BOOL else "Mul", col, g.cast(b, dt))


@exporter(
    "aten.einsum.default",
    samples=[Sample(lambda a, b: torch.einsum("ij,jk->ik", a, b), (torch.randn(2, 3), torch.randn(3, 4)), emits=("Einsum",)),
             Sample(lambda a, b: torch.einsum("b h i d, b h j d -> b h i j", a, b), (torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4)),
                    emits=("Einsum",), name="spaces"),
             Sample(lambda a, b: torch.einsum("...ij,...jk", a, b), (torch.randn(2, 3, 4), torch.randn(4, 5)), emits=("Einsum",), name="ellipsis"),
             Sample(lambda a: torch.einsum("ii->i", a), (torch.randn(3, 3),), emits=("Einsum",), name="diagonal")],
)
def einsum(g, equation, tensors, *, path=None):
    """ONNX Einsum takes torch's equations (spaces dropped); operands in the result type. Ellipses
    covering fewer dims than the others get leading size-1 dims (broadcasting, as torch does)."""
    dt = g.out_dtype()
    equation = equation.replace(" ", "")
    subs = equation.split("->")[0].split(",")
    if len(subs) != len(tensors):
        raise g.error(f"einsum equation {equation!r} is for {len(subs)} operands, got {len(tensors)}")
    spans = [g.rank(t) - len(s.replace("...", "")) if "..." in s else None for s, t in zip(subs, tensors)]
    widest = max((n for n in spans if n is not None), default=0)
    operands = []
    for sub, t, n in zip(subs, tensors, spans):
        t = g.cast(t, dt)
        if n is not None and n < widest:
            at = sub.index("...")
            t = g.op("Unsqueeze", t, g.const(np.arange(at, at + widest - n, dtype=np.int64)))
        operands.append(t)
    return g.op("Einsum", *operands, equation=equation)
