"""Matrix products: linear, addmm, mm, bmm, matmul -> Gemm / MatMul (+ Add)."""

from __future__ import annotations

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


@exporter(
    "aten.addmm.default",
    samples=[Sample(lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2.0),
                    (torch.randn(4), torch.randn(3, 5), torch.randn(5, 4)), emits=("Gemm",))],
)
def addmm(g, bias, m1, m2, *, beta=1, alpha=1):
    return g.op("Gemm", m1, m2, bias, alpha=float(alpha), beta=float(beta))


@exporter(
    "aten.mm.default",
    samples=[Sample(torch.mm, (torch.randn(3, 5), torch.randn(5, 4)), emits=("MatMul",))],
)
@exporter(
    "aten.bmm.default",
    samples=[Sample(torch.bmm, (torch.randn(2, 3, 5), torch.randn(2, 5, 4)), emits=("MatMul",))],
)
@exporter(
    "aten.matmul.default",
    samples=[Sample(torch.matmul, (torch.randn(2, 2, 3, 5), torch.randn(5, 4)), emits=("MatMul",)),
             Sample(torch.matmul, (torch.randn(2, 3, 5), torch.randn(5)), emits=("MatMul",), name="vector")],
)
def matmul(g, a, b):
    """numpy matmul semantics in both frameworks."""
    return g.op("MatMul", a, b)
