"""Attention (opset 23-25): masks (bool or additive), causal and sliding windows, KV cache,
grouped-query heads, softcap, nonpad_kv_seqlen and the qk_matmul_output modes."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ._static import np_dtype


def _heads(x, n):
    b, s, h = x.shape
    return jnp.transpose(jnp.reshape(x, (b, s, n, h // n)), (0, 2, 1, 3))


def _window_allowed(q_len, kv_len, offset, left, right):
    """Bool [.., q, kv]: causal/sliding-window visibility with the frontier moved by ``offset``."""
    i = jnp.arange(q_len).reshape(q_len, 1)
    j = jnp.arange(kv_len).reshape(1, kv_len)
    if jnp.ndim(offset) > 0:
        diff = (i + jnp.reshape(offset, (-1, 1, 1))) - j  # (batch, q, kv)
    else:
        diff = (i + offset) - j
    allowed = jnp.ones(diff.shape, bool)
    if left is not None:
        allowed &= diff <= left
    if right is not None:
        allowed &= -diff <= right
    return allowed if jnp.ndim(offset) == 0 else allowed[:, None]


@importer("Attention", since=25)
def attention(ctx, q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *,
              is_causal, kv_num_heads, q_num_heads, qk_matmul_output_mode, scale, softcap,
              softmax_precision, left_window_size, right_window_size):
    dt = q.dtype
    rank3 = q.ndim == 3
    if rank3:
        if q_num_heads is None or kv_num_heads is None:
            raise ctx.error("3-D inputs need the q_num_heads and kv_num_heads attributes")
        q, k, v = _heads(q, q_num_heads), _heads(k, kv_num_heads), _heads(v, kv_num_heads)
    if scale is None:
        scale = 1 / np.sqrt(q.shape[3])
    s = jnp.asarray(np.sqrt(scale), dt)
    if past_key is not None:
        k = jnp.concatenate([past_key, k], axis=2)
    if past_value is not None:
        v = jnp.concatenate([past_value, v], axis=2)
    present_k, present_v = k, v
    q_len, kv_len = q.shape[2], k.shape[2]
    neg = jnp.asarray(-jnp.inf, dt)
    zero = jnp.zeros((), dt)
    bias = jnp.zeros((q_len, kv_len), dt)
    if attn_mask is not None:
        pad = kv_len - attn_mask.shape[-1]
        if pad > 0:
            fill = False if attn_mask.dtype == bool else -jnp.inf
            attn_mask = jnp.pad(attn_mask, [(0, 0)] * (attn_mask.ndim - 1) + [(0, pad)], constant_values=fill)
        bias = jnp.where(attn_mask, zero, neg) if attn_mask.dtype == bool else attn_mask.astype(dt) + bias
    if nonpad_kv_seqlen is not None and past_key is None:
        offset = jnp.reshape(nonpad_kv_seqlen, (-1,)) - q_len
    else:
        offset = past_key.shape[2] if past_key is not None else 0
    left = left_window_size if left_window_size is not None and left_window_size >= 0 else None
    right = right_window_size if right_window_size is not None and right_window_size >= 0 else None
    if is_causal:
        bias = bias + jnp.where(_window_allowed(q_len, kv_len, offset, None, 0), zero, neg)
    if left is not None or right is not None:
        bias = bias + jnp.where(_window_allowed(q_len, kv_len, offset, left, right), zero, neg)
    if nonpad_kv_seqlen is not None:
        keep = jnp.arange(kv_len) < jnp.reshape(nonpad_kv_seqlen, (-1, 1))
        bias = bias + jnp.where(keep, zero, neg).reshape(q.shape[0], 1, 1, kv_len)
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        if hq % hk:
            raise ctx.error(f"{hq} query heads cannot share {hk} key/value heads")
        k, v = jnp.repeat(k, hq // hk, axis=1), jnp.repeat(v, hq // hk, axis=1)
    qk = jnp.matmul(q * s, jnp.swapaxes(k * s, -1, -2), precision=lax.Precision.HIGHEST)
    if softcap and softcap > 0:
        qk = jnp.tanh(qk / softcap) * softcap
    with_bias = qk + bias
    qk_out = with_bias if qk_matmul_output_mode == 2 else qk
    sm_in = with_bias.astype(np_dtype(softmax_precision)) if softmax_precision else with_bias
    m = jnp.max(sm_in, axis=-1, keepdims=True)
    m = jnp.where(jnp.isneginf(m), jnp.zeros_like(m), m)
    e = jnp.exp(sm_in - m)
    tot = jnp.sum(e, axis=-1, keepdims=True)
    probs = e / jnp.where(tot == 0, jnp.ones_like(tot), tot)
    masked_row = jnp.isneginf(jnp.max(jnp.broadcast_to(bias, with_bias.shape), axis=-1, keepdims=True))
    probs = jnp.where(masked_row, jnp.zeros_like(probs), probs)
    if qk_matmul_output_mode == 3:
        qk_out = probs
    y = jnp.matmul(probs.astype(dt), v, precision=lax.Precision.HIGHEST)
    if rank3:
        y = jnp.reshape(jnp.transpose(y, (0, 2, 1, 3)), (y.shape[0], y.shape[2], -1))
    outs = (y, present_k, present_v, qk_out.astype(dt))
    return outs[: ctx.num_outputs] if ctx.num_outputs > 1 else y
