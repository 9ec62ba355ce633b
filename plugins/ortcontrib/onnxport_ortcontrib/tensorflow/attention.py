"""Attention and MultiHeadAttention (com.microsoft) for TensorFlow: scaled dot-product attention
over heads, with onnxruntime's masks (an additive ``mask_filter_value`` where a key is masked),
attention bias, causal masking and past/present caches. The hidden sizes must be static; batch
and sequence lengths may be unknown until run time."""

from __future__ import annotations

import math

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import attention as C
from ..cases.attention import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)


def _heads(x, n):
    """(B, S, N*H) -> (B, N, S, H)."""
    d = tf.shape(x)
    return tf.transpose(tf.reshape(x, tf.stack([d[0], d[1], n, x.shape[-1] // n])), [0, 2, 1, 3])


def _key_mask(ctx, mask, batch, q_len, total):
    """onnxruntime's mask forms -> a bool tensor broadcasting to (B, 1, S, T), True = masked:
    1-D (B) valid lengths; 1-D (2B) ends then starts; 2-D (B, T) and 3-D (B, S, T) raw masks
    (0 = masked). ``batch``: the batch size (a tensor where it is only known at run time)."""
    mask = tf.convert_to_tensor(mask)
    keys = tf.range(total, dtype=tf.int64)
    rank = len(mask.shape)
    if rank == 1:  # (B) or (2B): which one is known when the batch size is
        m = tf.cast(mask, tf.int64)
        end = m[:batch]
        start = tf.cond(tf.shape(m)[0] > batch, lambda: m[batch:2 * batch], lambda: tf.zeros_like(end))
        return ((keys[None, :] >= end[:, None]) | (keys[None, :] < start[:, None]))[:, None, None, :]
    if rank == 2:
        return tf.equal(mask, 0)[:, None, None, :]
    if rank == 3:
        return tf.equal(mask, 0)[:, None]
    raise ctx.error(f"mask of shape {tuple(mask.shape)} is none of onnxruntime's forms (B), (2B), (B, T), "
                    "(B, S, T)")


def _attend(q, k, v, *, scale, masked, filter_value, causal, bias):
    """softmax(q k^T * scale + masks + bias) v in float32, heads kept: (B, N, S, Hv)."""
    q_len, total = tf.shape(q)[2], tf.shape(k)[2]
    logits = tf.linalg.matmul(tf.cast(q, tf.float32), tf.cast(k, tf.float32), transpose_b=True) * scale
    if masked is not None:
        logits = logits + tf.cast(masked, tf.float32) * filter_value
    if causal:
        future = tf.range(total)[None, :] > (tf.range(q_len)[:, None] + (total - q_len))
        logits = logits + tf.cast(future, tf.float32) * filter_value
    if bias is not None:
        logits = logits + tf.cast(bias, tf.float32)
    return tf.linalg.matmul(tf.nn.softmax(logits, axis=-1), tf.cast(v, tf.float32))


def _merge(y, dtype):
    """(B, N, S, H) -> (B, S, N*H) in ``dtype``."""
    d = tf.shape(y)
    merged = tf.reshape(tf.transpose(y, [0, 2, 1, 3]), tf.stack([d[0], d[2], y.shape[1] * y.shape[3]]))
    return tf.cast(merged, dtype)


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
    x, weights = tf.convert_to_tensor(x), tf.convert_to_tensor(weights)
    dq, dk, dv = (list(qkv_hidden_sizes) if qkv_hidden_sizes else [weights.shape[1] // 3] * 3)
    if dq != dk or dq % num_heads or dv % num_heads or dq + dk + dv != weights.shape[1]:
        raise ctx.error(f"qkv_hidden_sizes {[dq, dk, dv]} do not fit weights {tuple(weights.shape)} "
                        f"and {num_heads} heads")
    proj = tf.tensordot(tf.cast(x, tf.float32), tf.cast(weights, tf.float32), axes=[[2], [0]])
    if bias is not None:
        proj = proj + tf.cast(bias, tf.float32)
    proj = tf.cast(proj, x.dtype)
    q, k, v = (_heads(t, num_heads) for t in tf.split(proj, [dq, dk, dv], axis=-1))
    if past is not None:
        k = tf.concat((past[0], k), axis=2)
        v = tf.concat((past[1], v), axis=2)
    masked = None if mask_index is None else _key_mask(ctx, mask_index, tf.shape(x)[0], None, tf.shape(k)[2])
    y = _attend(q, k, v, scale=scale or 1.0 / math.sqrt(dq // num_heads), masked=masked,
                filter_value=mask_filter_value, causal=bool(unidirectional), bias=attention_bias)
    out = _merge(y, x.dtype)
    if ctx.num_outputs == 1:
        return out
    return out, tf.stack((k, v))


@importer("MultiHeadAttention", since=1, domain=DOMAIN, cases=C.multi_head_attention_cases())
def multi_head_attention(ctx, query, key=None, value=None, bias=None, key_padding_mask=None, attention_bias=None,
                         past_key=None, past_value=None, past_sequence_length=None, cache_indirection=None, *,
                         num_heads, mask_filter_value=-10000.0, scale=0.0, unidirectional=0):
    """Attention of projected Q (B, S, D) over K and V given as (B, L, D) or already split into
    heads (B, N, L, H); ``bias`` (Dq + Dk + Dv) is added to the (B, L, D) forms; ``past_key`` /
    ``past_value`` (B, N, P, H) are prepended and returned as ``present_key`` / ``present_value``."""
    query = tf.convert_to_tensor(query)
    if key is None or value is None or len(query.shape) != 3:
        raise ctx.error("MultiHeadAttention with packed QKV (query 5-D) or packed KV is not supported: give "
                        "query (B, S, D), key and value")
    if cache_indirection is not None:
        raise ctx.error("MultiHeadAttention with cache_indirection (beam search) is not supported")
    key, value = tf.convert_to_tensor(key), tf.convert_to_tensor(value)
    dq = query.shape[-1]
    q = query if bias is None else tf.cast(tf.cast(query, tf.float32) + tf.cast(bias[:dq], tf.float32), query.dtype)
    q = _heads(q, num_heads)
    if len(key.shape) == 3:
        dk = key.shape[-1]
        if bias is not None:
            key = tf.cast(tf.cast(key, tf.float32) + tf.cast(bias[dq:dq + dk], tf.float32), key.dtype)
            value = tf.cast(tf.cast(value, tf.float32) + tf.cast(bias[dq + dk:], tf.float32), value.dtype)
        k, v = _heads(key, num_heads), _heads(value, num_heads)
    else:
        k, v = key, value
    if past_key is not None and past_value is not None:
        k = tf.concat((past_key, k), axis=2)
        v = tf.concat((past_value, v), axis=2)
    masked = None if key_padding_mask is None else _key_mask(ctx, key_padding_mask, tf.shape(query)[0], None,
                                                               tf.shape(k)[2])
    y = _attend(q, k, v, scale=scale or 1.0 / math.sqrt(dq // num_heads), masked=masked,
                filter_value=mask_filter_value, causal=bool(unidirectional), bias=attention_bias)
    outs = (_merge(y, query.dtype), k, v)
    return outs[0] if ctx.num_outputs == 1 else outs[: ctx.num_outputs]
