"""scaled_dot_product_attention -> Attention (opset 23+) or MatMul/Softmax/MatMul."""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir
import torch
import torch.nn.functional as F

from onnxport import Sample, exporter

_Q = (torch.randn(2, 3, 5, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 4))


def _scalar_int(g, size):
    return g.const(np.asarray(size, dtype=np.int64)) if isinstance(size, int) else g.op(
        "Squeeze", size, g.const(np.asarray([0], dtype=np.int64)))


@exporter(
    "aten.scaled_dot_product_attention.default",
    samples=[Sample(F.scaled_dot_product_attention, _Q, emits=("Softmax", "MatMul"), name="plain"),
             Sample(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (_Q[0], _Q[0], _Q[0]),
                    emits=("Softmax",), name="causal"),
             Sample(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
                    (*_Q, torch.rand(5, 6) > 0.3), emits=("Where", "Softmax"), name="bool_mask"),
             Sample(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                    (*_Q, torch.randn(2, 1, 5, 6)), emits=("Add", "Softmax"), name="float_mask")],
)
def scaled_dot_product_attention(g, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    """One Attention node from opset 23; the math form (as torch computes it) before."""
    if dropout_p:
        raise g.error("attention dropout is a training-time op; export the module in eval mode")
    if g.opset >= 23 and g.rank(q) == 4:
        return g.op("Attention", q, k, v, attn_mask, is_causal=int(bool(is_causal)),
                    scale=None if scale is None else float(scale))
    if enable_gqa and q.shape is not None and k.shape is not None and q.shape[-3] != k.shape[-3]:
        raise g.error("grouped-query attention needs opset 23 (Attention)")
    dt = q.dtype
    rank = g.rank(q)
    e = q.shape[-1]
    if scale is not None:
        s = g.scalar(float(scale), dt)
    elif isinstance(e, int):
        s = g.scalar(1.0 / math.sqrt(e), dt)
    else:
        s = g.op("Reciprocal", g.op("Sqrt", g.cast(g.dim_size(q, rank - 1), dt)))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=perm)), s)
    neg_inf = g.scalar(-np.inf, dt)
    if is_causal:
        rows = g.op("Range", g.const(np.asarray(0, dtype=np.int64)), _scalar_int(g, g.dim_size(q, rank - 2)), g.const(np.asarray(1, dtype=np.int64)))
        cols = g.op("Range", g.const(np.asarray(0, dtype=np.int64)), _scalar_int(g, g.dim_size(k, rank - 2)), g.const(np.asarray(1, dtype=np.int64)))
        keep = g.op("GreaterOrEqual", g.op("Unsqueeze", rows, g.const(np.asarray([1], dtype=np.int64))), cols)
        scores = g.op("Where", keep, scores, neg_inf)
    if attn_mask is not None:
        if attn_mask.dtype == ir.DataType.BOOL:
            scores = g.op("Where", attn_mask, scores, neg_inf)
        else:
            scores = g.op("Add", scores, g.cast(attn_mask, dt))
    return g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
