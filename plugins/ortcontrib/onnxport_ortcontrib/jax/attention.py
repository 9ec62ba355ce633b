"""Attention and MultiHeadAttention (com.microsoft) for JAX: scaled dot-product attention over
heads, with onnxruntime's masks (an additive ``mask_filter_value`` where a key is masked),
attention bias, causal masking and past/present caches."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import attention as C
from ..cases.attention import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)


def _heads(x, n):
    """(B, S, N*H) -> (B, N, S, H)."""
    b, s, _ = x.shape
    return jnp.swapaxes(jnp.reshape(x, (b, s, n, -1)), 1, 2)


def _key_mask(ctx, mask, batch, q_len, total):
    """onnxruntime's mask forms -> a bool array broadcasting to (B, 1, S, T), True = masked:
    1-D (B) valid lengths; 1-D (2B) ends then starts; 2-D (B, T) and 3-D (B, S, T) raw masks
    (0 = masked)."""
    keys = jnp.arange(total)
    if mask.ndim == 1 and mask.shape[0] == batch:
        return (keys[None, :] >= mask[:, None])[:, None, None, :]
    if mask.ndim == 1 and mask.shape[0] == 2 * batch:
        end, start = mask[:batch], mask[batch:]
        return ((keys[None, :] >= end[:, None]) | (keys[None, :] < start[:, None]))[:, None, None, :]
    if mask.ndim == 2 and tuple(mask.shape) == (batch, total):
        return (mask == 0)[:, None, None, :]
    if mask.ndim == 3 and tuple(mask.shape) == (batch, q_len, total):
        return (mask == 0)[:, None]
    raise ctx.error(f"mask of shape {tuple(mask.shape)} is none of onnxruntime's forms for batch {batch}, "
                    f"sequence {q_len} and total sequence {total}: (B), (2B), (B, T), (B, S, T)")


def _attend(q, k, v, *, scale, masked, filter_value, causal, bias):
    """softmax(q k^T * scale + masks + bias) v in float32, heads kept: (B, N, S, Hv)."""
    q_len, total = q.shape[2], k.shape[2]
    f32 = jnp.float32
    logits = jnp.matmul(q.astype(f32), jnp.swapaxes(k.astype(f32), -1, -2)) * scale
    if masked is not None:
        logits = logits + masked.astype(f32) * filter_value
    if causal:
        future = jnp.arange(total)[None, :] > (jnp.arange(q_len)[:, None] + (total - q_len))
        logits = logits + future.astype(f32) * filter_value
    if bias is not None:
        logits = logits + bias.astype(f32)
    return jnp.matmul(jax.nn.softmax(logits, axis=-1), v.astype(f32))


def _merge(y, dtype):
    """(B, N, S, H) -> (B, S, N*H) in ``dtype``."""
    b, n, s, h = y.shape
    return jnp.reshape(jnp.swapaxes(y, 1, 2), (b, s, n * h)).astype(dtype)


@importer("Attention", since=1, domain=DOMAIN, cases=C.attention_cases())
def attention(ctx, x, weights, bias=None, mask_index=None, past=None, attention_bias=None,
              past_sequence_length=None, *, num_heads, qkv_hidden_sizes=None, unidirectional=0, do_rotary=0,
              rotary_embedding_dim=0, mask_filter_value=-10000.0, scale=0.0, past_present_share_buffer=0):
    """Self attention with the Q, K, V projections inside (``weights`` (D, Dq + Dk + Dv), ``bias``);
    ``past`` (2, B, N, P, H) is prepended to K and V and ``present`` returned."""
    if do_rotary:
        raise ctx.error("Attention with do_rotary=1 is not supported (onnxruntime's transformer optimizer "
                        "writes RotaryEmbedding nodes instead)")
    if past_present_share_buffer:
        raise ctx.error("Attention with past_present_share_buffer=1 is not supported")
    dq, dk, dv = (list(qkv_hidden_sizes) if qkv_hidden_sizes else [weights.shape[1] // 3] * 3)
    if dq != dk or dq % num_heads or dv % num_heads or dq + dk + dv != weights.shape[1]:
        raise ctx.error(f"qkv_hidden_sizes {[dq, dk, dv]} do not fit weights {tuple(weights.shape)} "
                        f"and {num_heads} heads")
    proj = jnp.matmul(x.astype(jnp.float32), weights.astype(jnp.float32))
    if bias is not None:
        proj = proj + bias.astype(jnp.float32)
    proj = proj.astype(x.dtype)
    q, k, v = (_heads(t, num_heads) for t in jnp.split(proj, [dq, dq + dk], axis=-1))
    if past is not None:
        k = jnp.concatenate((past[0], k), axis=2)
        v = jnp.concatenate((past[1], v), axis=2)
    batch, q_len, total = x.shape[0], x.shape[1], k.shape[2]
    masked = None if mask_index is None else _key_mask(ctx, mask_index, batch, q_len, total)
    y = _attend(q, k, v, scale=scale or 1.0 / math.sqrt(dq // num_heads), masked=masked,
                filter_value=mask_filter_value, causal=bool(unidirectional), bias=attention_bias)
    out = _merge(y, x.dtype)
    if ctx.num_outputs == 1:
        return out
    return out, jnp.stack((k, v))


@importer("MultiHeadAttention", since=1, domain=DOMAIN, cases=C.multi_head_attention_cases())
def multi_head_attention(ctx, query, key=None, value=None, bias=None, key_padding_mask=None, attention_bias=None,
                         past_key=None, past_value=None, past_sequence_length=None, cache_indirection=None, *,
                         num_heads, mask_filter_value=-10000.0, scale=0.0, unidirectional=0):
    """Attention of projected Q (B, S, D) over K and V given as (B, L, D) or already split into
    heads (B, N, L, H); ``bias`` (Dq + Dk + Dv) is added to the (B, L, D) forms; ``past_key`` /
    ``past_value`` (B, N, P, H) are prepended and returned as ``present_key`` / ``present_value``."""
    if key is None or value is None or query.ndim != 3:
        raise ctx.error("MultiHeadAttention with packed QKV (query 5-D) or packed KV is not supported: give "
                        "query (B, S, D), key and value")
    if cache_indirection is not None:
        raise ctx.error("MultiHeadAttention with cache_indirection (beam search) is not supported")
    dq = query.shape[-1]
    f32 = jnp.float32
    q = query if bias is None else (query.astype(f32) + bias[:dq].astype(f32)).astype(query.dtype)
    q = _heads(q, num_heads)
    if key.ndim == 3:
        dk = key.shape[-1]
        if bias is not None:
            key = (key.astype(f32) + bias[dq:dq + dk].astype(f32)).astype(key.dtype)
            value = (value.astype(f32) + bias[dq + dk:].astype(f32)).astype(value.dtype)
        k, v = _heads(key, num_heads), _heads(value, num_heads)
    else:
        k, v = key, value
    if past_key is not None and past_value is not None:
        k = jnp.concatenate((past_key, k), axis=2)
        v = jnp.concatenate((past_value, v), axis=2)
    batch, q_len, total = query.shape[0], query.shape[1], k.shape[2]
    masked = None if key_padding_mask is None else _key_mask(ctx, key_padding_mask, batch, q_len, total)
    y = _attend(q, k, v, scale=scale or 1.0 / math.sqrt(dq // num_heads), masked=masked,
                filter_value=mask_filter_value, causal=bool(unidirectional), bias=attention_bias)
    outs = (_merge(y, query.dtype), k, v)
    return outs[0] if ctx.num_outputs == 1 else outs[: ctx.num_outputs]
