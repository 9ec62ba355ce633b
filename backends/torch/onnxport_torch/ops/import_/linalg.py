"""Linear algebra beyond MatMul/Gemm: Det and Einsum."""

from __future__ import annotations

import re

import torch

from onnxport import importer

from ...context import NodeContext
from ._numeric import WIDE_UNSIGNED, carrier, restore

_EQUATION = re.compile(r"^[A-Za-z.,\s]*(->[A-Za-z.\s]*)?$")


@importer("Det", since=22)
def det(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """Determinant of each square matrix in the last two dimensions."""
    if not x.is_floating_point():
        raise ctx.error(f"Det needs a floating-point input, got {x.dtype}")
    if x.dtype in (torch.float16, torch.bfloat16):  # no half-precision LU kernels on CPU
        return torch.linalg.det(x.to(torch.float32)).to(x.dtype)
    return torch.linalg.det(x)


@importer("Einsum", since=28)
def einsum(ctx: NodeContext, *xs: torch.Tensor, equation: str) -> torch.Tensor:
    """Einstein summation following ``equation`` (implicit and explicit output forms)."""
    if not _EQUATION.match(equation) or equation.count("->") > 1:
        raise ctx.error(f"malformed einsum equation {equation!r}")
    eq = equation.replace(" ", "")
    dtype = xs[0].dtype
    if dtype in WIDE_UNSIGNED:
        return restore(torch.einsum(eq, *[carrier(x) for x in xs]), dtype)
    return torch.einsum(eq, *xs)
