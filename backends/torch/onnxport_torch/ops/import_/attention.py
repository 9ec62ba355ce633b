"""Attention (opset 23-25): scaled dot-product attention with KV cache, GQA, masks (boolean or
additive, causal, sliding window, per-batch key lengths), softcap and the QK output modes."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ... import dtypes


def _heads(t, num_heads: int):
    """[B, S, H*D] -> [B, H, S, D]."""
    b, s, hidden = t.shape
    return t.reshape(b, s, num_heads, hidden // num_heads).transpose(1, 2)


def _neg_inf_where(allowed, dtype):
    zero = torch.zeros((), dtype=dtype, device=allowed.device)
    return torch.where(allowed, zero, torch.full((), float("-inf"), dtype=dtype, device=allowed.device))


def _frontier(q_len: int, kv_len: int, offset, device):
    """(i + offset) - j for query i and key j; per batch [B, 1, q, kv] when offset is a tensor."""
    i = torch.arange(q_len, device=device).reshape(q_len, 1)
    j = torch.arange(kv_len, device=device).reshape(1, kv_len)
    if isinstance(offset, torch.Tensor):
        return (i + offset.reshape(-1, 1, 1).to(torch.int64) - j).unsqueeze(1)
    return i + int(offset) - j


@importer("Attention", since=25)
def attention(ctx, q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *,
              is_causal, kv_num_heads, q_num_heads, qk_matmul_output_mode, scale, softcap,
              softmax_precision, left_window_size=-1, right_window_size=-1):
    three_d = q.dim() == 3
    if three_d:
        if not q_num_heads or not kv_num_heads:
            raise ctx.error("3-D Attention inputs need q_num_heads and kv_num_heads")
        q, k, v = _heads(q, q_num_heads), _heads(k, kv_num_heads), _heads(v, kv_num_heads)
    dtype = q.dtype
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    # the scale is split over Q and K (sqrt each), in Q's type, as ONNX defines it
    root = torch.tensor(math.sqrt(scale), dtype=dtype, device=q.device)

    if past_key is not None:
        k = torch.cat([past_key, k], dim=2)
    if past_value is not None:
        v = torch.cat([past_value, v], dim=2)
    present_k, present_v = k, v
    q_len, kv_len, batch = q.shape[2], k.shape[2], q.shape[0]

    if attn_mask is not None and attn_mask.shape[-1] < kv_len:  # a short mask is padded as masked
        pad = kv_len - attn_mask.shape[-1]
        fill = False if attn_mask.dtype == torch.bool else float("-inf")
        attn_mask = torch.nn.functional.pad(attn_mask, (0, pad), value=fill)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = _neg_inf_where(attn_mask, dtype)

    if past_key is None and nonpad_kv_seqlen is not None:
        offset = nonpad_kv_seqlen.reshape(-1) - q_len
    else:
        offset = past_key.shape[2] if past_key is not None else 0

    bias = torch.zeros((q_len, kv_len), dtype=dtype, device=q.device)
    if attn_mask is not None:
        bias = bias + attn_mask
    if is_causal:
        bias = bias + _neg_inf_where(_frontier(q_len, kv_len, offset, q.device) >= 0, dtype)
    left = -1 if left_window_size is None else int(left_window_size)
    right = -1 if right_window_size is None else int(right_window_size)
    if left >= 0 or right >= 0:
        diff = _frontier(q_len, kv_len, offset, q.device)
        allowed = torch.ones_like(diff, dtype=torch.bool)
        if left >= 0:
            allowed &= diff <= left
        if right >= 0:
            allowed &= -diff <= right
        bias = bias + _neg_inf_where(allowed, dtype)
    if nonpad_kv_seqlen is not None:
        keep = torch.arange(kv_len, device=q.device) < nonpad_kv_seqlen.reshape(-1, 1)
        bias = bias + _neg_inf_where(keep, dtype).reshape(batch, 1, 1, kv_len)

    heads_q, heads_kv = q.shape[1], k.shape[1]
    if heads_q != heads_kv:
        if heads_q % heads_kv:
            raise ctx.error(f"{heads_q} query heads are not a multiple of {heads_kv} key/value heads")
        k = k.repeat_interleave(heads_q // heads_kv, dim=1)
        v = v.repeat_interleave(heads_q // heads_kv, dim=1)

    qk = torch.matmul(q * root, k.transpose(-1, -2) * root)
    if softcap and softcap > 0:
        qk = torch.tanh(qk / softcap) * softcap
    with_bias = qk + bias
    qk_out = with_bias if qk_matmul_output_mode == 2 else qk

    logits = with_bias
    if softmax_precision:
        logits = logits.to(dtypes.to_torch_dtype(softmax_precision))
    probs = torch.softmax(logits, dim=-1)
    # a row with every key masked attends to nothing: zeros, not NaN
    masked_row = torch.isneginf(bias.amax(dim=-1, keepdim=True))
    probs = torch.where(masked_row, torch.zeros((), dtype=probs.dtype, device=probs.device), probs)
    if qk_matmul_output_mode == 3:
        qk_out = probs
    y = torch.matmul(probs.to(dtype), v)
    if three_d:
        y = y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1)
    outs = (y, present_k, present_v, qk_out.to(dtype))
    return y if ctx.num_outputs == 1 else outs[: ctx.num_outputs]
