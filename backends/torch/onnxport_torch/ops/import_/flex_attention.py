"""FlexAttention (ai.onnx.preview 1): rank-4 scaled dot-product attention with GQA and optional
score_mod / prob_mod subgraphs applied to the scores before and the probabilities after Softmax."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ... import dtypes
from ...context import NodeContext


def _modify(ctx: NodeContext, body, name: str, t: torch.Tensor) -> torch.Tensor:
    """Run a modifier subgraph on ``t``; it must give one tensor of t's shape."""
    outs = body(t)
    if len(outs) != 1:
        raise ctx.error(f"{name} must produce exactly one output, got {len(outs)}")
    out = outs[0]
    if tuple(out.shape) != tuple(t.shape):
        raise ctx.error(f"{name} changed the shape {tuple(t.shape)} to {tuple(out.shape)}")
    return out.to(t.dtype)


@importer("FlexAttention", since=1, domain="ai.onnx.preview")
def flex_attention(ctx: NodeContext, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *,
                   prob_mod=None, score_mod=None, softmax_precision: int | None = None,
                   scale: float | None = None) -> torch.Tensor:
    """softmax(score_mod(Q K^T * scale)) -> prob_mod -> @ V, scores in the softmax precision."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ctx.error(f"Q, K and V must be rank 4, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    heads_q, heads_kv, head_size = q.shape[1], k.shape[1], q.shape[3]
    if v.shape[1] != heads_kv or v.shape[2] != k.shape[2]:
        raise ctx.error(f"K {tuple(k.shape)} and V {tuple(v.shape)} differ in heads or sequence length")
    if k.shape[3] != head_size:
        raise ctx.error(f"Q and K head sizes differ: {head_size} and {k.shape[3]}")
    if heads_q != heads_kv:
        if heads_kv <= 0 or heads_q % heads_kv:
            raise ctx.error(f"{heads_q} query heads are not a multiple of {heads_kv} key/value heads")
        k = k.repeat_interleave(heads_q // heads_kv, dim=1)  # query head h reads KV head h // group
        v = v.repeat_interleave(heads_q // heads_kv, dim=1)

    if scale is None:
        scale = 1.0 / math.sqrt(head_size)
    # sqrt(scale) is applied to Q and K each, computed in float32 and cast to the input type
    root = torch.tensor(scale, dtype=torch.float32).sqrt().to(q.dtype)
    scores = torch.matmul(q * root, (k * root).transpose(-1, -2))

    if softmax_precision:
        work = dtypes.to_torch_dtype(softmax_precision)
        if not work.is_floating_point:
            raise ctx.error(f"softmax_precision {softmax_precision} is not a floating-point type")
    else:
        work = torch.float64 if q.dtype == torch.float64 else torch.float32
    scores = scores.to(work)
    if score_mod is not None:
        scores = _modify(ctx, score_mod, "score_mod", scores)
    probs = torch.softmax(scores, dim=-1)
    if prob_mod is not None:
        probs = _modify(ctx, prob_mod, "prob_mod", probs)
    return torch.matmul(probs, v.to(work)).to(v.dtype)
