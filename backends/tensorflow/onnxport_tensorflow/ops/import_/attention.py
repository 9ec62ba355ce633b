"""Attention (opset 23-25): masks (bool or additive), causal and sliding windows, KV cache,
grouped-query heads, softcap, nonpad_kv_seqlen and the qk_matmul_output modes."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor, tf_dtype


def _heads(x, n):
    b, s = tf.shape(x)[0], tf.shape(x)[1]
    return tf.transpose(tf.reshape(x, tf.stack([b, s, n, -1])), (0, 2, 1, 3))


def _window_allowed(q_len, kv_len, offset, left, right):
    """Bool [.., q, kv]: causal/sliding-window visibility with the frontier moved by ``offset``."""
    i = tf.reshape(tf.range(q_len, dtype=tf.int64), [q_len, 1])
    j = tf.reshape(tf.range(kv_len, dtype=tf.int64), [1, kv_len])
    batched = not isinstance(offset, int)
    if batched:
        diff = (i + tf.reshape(tf.cast(offset, tf.int64), [-1, 1, 1])) - j
    else:
        diff = (i + offset) - j
    allowed = tf.ones_like(diff, tf.bool)
    if left is not None:
        allowed &= diff <= left
    if right is not None:
        allowed &= -diff <= right
    return allowed[:, None] if batched else allowed


@importer("Attention", since=25)
def attention(ctx, q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *,
              is_causal, kv_num_heads, q_num_heads, qk_matmul_output_mode, scale, softcap,
              softmax_precision, left_window_size, right_window_size):
    q, k, v = tensor(q), tensor(k), tensor(v)
    dt = q.dtype
    rank3 = rank(q) == 3
    if rank3:
        if q_num_heads is None or kv_num_heads is None:
            raise ctx.error("3-D inputs need the q_num_heads and kv_num_heads attributes")
        q, k, v = _heads(q, q_num_heads), _heads(k, kv_num_heads), _heads(v, kv_num_heads)
    if scale is None:
        scale = 1 / np.sqrt(q.shape[3])
    s = tf.constant(np.sqrt(scale), dt)
    if past_key is not None:
        k = tf.concat([tf.cast(past_key, dt), k], axis=2)
    if past_value is not None:
        v = tf.concat([tf.cast(past_value, dt), v], axis=2)
    present_k, present_v = k, v
    q_len, kv_len = q.shape[2], k.shape[2]
    neg = tf.constant(-np.inf, dt)
    zero = tf.zeros((), dt)
    bias = tf.zeros((q_len, kv_len), dt)
    if attn_mask is not None:
        attn_mask = tensor(attn_mask)
        pad = kv_len - attn_mask.shape[-1]
        if pad > 0:
            fill = False if attn_mask.dtype == tf.bool else -np.inf
            attn_mask = tf.pad(attn_mask, [[0, 0]] * (rank(attn_mask) - 1) + [[0, pad]], constant_values=fill)
        bias = tf.where(attn_mask, zero, neg) if attn_mask.dtype == tf.bool else tf.cast(attn_mask, dt) + bias
    if nonpad_kv_seqlen is not None and past_key is None:
        offset = tf.reshape(tf.cast(nonpad_kv_seqlen, tf.int64), [-1]) - q_len
    else:
        offset = int(past_key.shape[2]) if past_key is not None else 0
    left = left_window_size if left_window_size is not None and left_window_size >= 0 else None
    right = right_window_size if right_window_size is not None and right_window_size >= 0 else None
    if is_causal:
        bias = bias + tf.where(_window_allowed(q_len, kv_len, offset, None, 0), zero, neg)
    if left is not None or right is not None:
        bias = bias + tf.where(_window_allowed(q_len, kv_len, offset, left, right), zero, neg)
    if nonpad_kv_seqlen is not None:
        keep = tf.range(kv_len, dtype=tf.int64) < tf.reshape(tf.cast(nonpad_kv_seqlen, tf.int64), [-1, 1])
        bias = bias + tf.reshape(tf.where(keep, zero, neg), [-1, 1, 1, kv_len])
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        if hq % hk:
            raise ctx.error(f"{hq} query heads cannot share {hk} key/value heads")
        k, v = tf.repeat(k, hq // hk, axis=1), tf.repeat(v, hq // hk, axis=1)
    qk = tf.linalg.matmul(q * s, k * s, transpose_b=True)
    if softcap and softcap > 0:
        qk = tf.tanh(qk / softcap) * softcap
    with_bias = qk + bias
    qk_out = with_bias if qk_matmul_output_mode == 2 else qk
    sm_in = tf.cast(with_bias, tf_dtype(softmax_precision)) if softmax_precision else with_bias
    m = tf.reduce_max(sm_in, axis=-1, keepdims=True)
    m = tf.where(tf.math.is_inf(m) & (m < 0), tf.zeros_like(m), m)
    e = tf.exp(sm_in - m)
    tot = tf.reduce_sum(e, axis=-1, keepdims=True)
    probs = e / tf.where(tot == 0, tf.ones_like(tot), tot)
    row_max = tf.reduce_max(tf.broadcast_to(bias, tf.shape(with_bias)), axis=-1, keepdims=True)
    probs = tf.where(tf.math.is_inf(row_max) & (row_max < 0), tf.zeros_like(probs), probs)
    if qk_matmul_output_mode == 3:
        qk_out = probs
    y = tf.linalg.matmul(tf.cast(probs, dt), v)
    if rank3:
        y = tf.transpose(y, (0, 2, 1, 3))
        y = tf.reshape(y, tf.stack([tf.shape(y)[0], tf.shape(y)[1], -1]))
    outs = (y, present_k, present_v, tf.cast(qk_out, dt))
    return outs[: ctx.num_outputs] if ctx.num_outputs > 1 else y
