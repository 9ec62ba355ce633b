"""Gemm and MatMul; ``nn.Linear`` when the weight is an initializer."""

from __future__ import annotations

import torch
from torch import nn

from onnxport import importer

from ._modules import bind


@importer("Gemm", since=13)
def gemm(ctx, a, b, c=None, *, alpha, beta, transA, transB):
    if transA:
        a = a.transpose(0, 1)
    if transB:
        b = b.transpose(0, 1)
    if beta == 0.0:
        c = None  # beta 0 ignores C, its nan and inf too (onnxruntime and the reference do)
    if c is not None and a.is_floating_point() and a.dtype == c.dtype:
        # one GEMM with the bias folded in (nn.Linear's kernel); C broadcasts as in ONNX
        return torch.addmm(c, a, b, beta=beta, alpha=alpha)
    y = a @ b
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c * beta if beta != 1.0 else c)
    return y.to(a.dtype)  # integer Gemm: float alpha/beta products truncate back to the input type


@gemm.module_builder
def gemm_module(ctx, *, alpha, beta, transA, transB):
    has_c = ctx.num_inputs > 2 and bool(ctx.weight_name(2))
    if transA or alpha != 1.0 or (has_c and beta != 1.0) or not transB or not ctx.is_initializer(1):
        return None
    w = ctx.param(1)
    if has_c:
        if not ctx.is_initializer(2):
            return None
        c = ctx.param(2)
        if c.dim() != 1 or c.shape[0] != w.shape[0]:
            return None
    m = nn.Linear(w.shape[1], w.shape[0], bias=has_c, device="meta")
    bind(m, "weight", w)
    bind(m, "bias", ctx.param(2) if has_c else None)
    return m, [0]


@importer("MatMul", since=13)
def matmul(ctx, a, b):
    return torch.matmul(a, b)
