"""GroupQueryAttention (com.microsoft) for TensorFlow: causal attention of N query heads over
``kv_num_heads`` shared K/V heads, with the KV cache in a buffer whose rows hold ``seqlens_k + 1``
valid positions each. The head counts and sizes must be static; batch, sequence and the
present buffer's length may be decided at run time."""

from __future__ import annotations

import math

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import group_query_attention as C
from ..cases.group_query_attention import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from .rotary import rotate


def _heads(x, n):
    d = tf.shape(x)
    return tf.transpose(tf.reshape(x, tf.stack([d[0], d[1], n, x.shape[-1] // n])), [0, 2, 1, 3])


@importer("GroupQueryAttention", since=1, domain=DOMAIN, cases=C.group_query_attention_cases())
def group_query_attention(ctx, query, key=None, value=None, past_key=None, past_value=None, seqlens_k=None,
                          total_sequence_length=None, cos_cache=None, sin_cache=None, position_ids=None,
                          attention_bias=None, head_sink=None, *, num_heads, kv_num_heads, scale=0.0, softcap=0.0,
                          local_window_size=-1, do_rotary=0, rotary_interleaved=0, smooth_softmax=0,
                          qk_output=0):
    """Row b has ``seqlens_k[b] + 1`` valid keys; its new S tokens sit at positions
    ``past_b = seqlens_k[b] + 1 - S`` on (0 for a first prompt, S == total_sequence_length).
    present_key/value (B, kv_heads, max(total, past buffer), H) hold the past rows' first
    ``past_b`` positions, the new keys after them and zeros beyond. ``do_rotary`` rotates Q and K
    at their positions first; ``local_window_size`` keeps the last ``local_window_size`` keys (the
    query's own included); ``softcap`` squashes logits to ``softcap * tanh(x / softcap)``;
    ``smooth_softmax`` and ``head_sink`` add a zero (or the head's sink) logit to the softmax's
    denominator."""
    if attention_bias is not None:
        raise ctx.error("GroupQueryAttention with attention_bias is not supported")
    if qk_output:
        raise ctx.error("GroupQueryAttention with qk_output is not supported")
    if seqlens_k is None or total_sequence_length is None:
        raise ctx.error("GroupQueryAttention needs seqlens_k and total_sequence_length")
    if num_heads % kv_num_heads:
        raise ctx.error(f"num_heads {num_heads} is not a multiple of kv_num_heads {kv_num_heads}")
    query = tf.convert_to_tensor(query)
    if key is None:  # packed (B, S, (N + 2 * N_kv) * H)
        head = query.shape[2] // (num_heads + 2 * kv_num_heads)
        query, key, value = tf.split(query, [num_heads * head, kv_num_heads * head, kv_num_heads * head], axis=-1)
    head = query.shape[2] // num_heads
    dims = tf.shape(query)
    batch, seq = dims[0], dims[1]
    total = tf.cast(tf.reshape(total_sequence_length, [-1])[0], tf.int32)
    q, k, v = _heads(query, num_heads), _heads(key, kv_num_heads), _heads(value, kv_num_heads)
    lengths = tf.cast(tf.reshape(seqlens_k, [-1]), tf.int32) + 1
    past_len = tf.where(tf.equal(seq, total), tf.zeros_like(lengths), lengths - seq)
    steps = tf.range(seq, dtype=tf.int32)
    if do_rotary:
        if cos_cache is None or sin_cache is None:
            raise ctx.error("GroupQueryAttention with do_rotary=1 needs cos_cache and sin_cache")
        pos = position_ids if position_ids is not None else past_len[:, None] + steps[None, :]
        rdim = cos_cache.shape[1] * 2
        q = rotate(q, pos, cos_cache, sin_cache, rdim, rotary_interleaved)
        k = rotate(k, pos, cos_cache, sin_cache, rdim, rotary_interleaved)
    buffer = tf.shape(past_key)[2] if past_key is not None else tf.constant(0, tf.int32)
    length = tf.maximum(total, buffer)
    t = tf.range(length, dtype=tf.int32)[None, :]  # (1, T)
    rel = t - past_len[:, None]  # (B, T): index into the new keys
    new_here = (rel >= 0) & (rel < seq)
    idx = tf.clip_by_value(rel, 0, seq - 1)

    def present(past, new):
        from_new = tf.gather(new, tf.tile(idx[:, None, :], [1, kv_num_heads, 1]), axis=2, batch_dims=2)
        out = tf.where(new_here[:, None, :, None], from_new, tf.zeros_like(from_new))
        if past is not None:
            padded = tf.pad(past, [[0, 0], [0, 0], [0, length - buffer], [0, 0]])
            out = tf.where((t < past_len[:, None])[:, None, :, None], padded, out)
        return out

    present_k, present_v = present(past_key, k), present(past_value, v)
    group = num_heads // kv_num_heads
    kk = tf.cast(tf.repeat(present_k, group, axis=1), tf.float32)
    vv = tf.cast(tf.repeat(present_v, group, axis=1), tf.float32)
    logits = tf.linalg.matmul(tf.cast(q, tf.float32), kk, transpose_b=True) * (scale or 1.0 / math.sqrt(head))
    if softcap > 0:
        logits = softcap * tf.tanh(logits / softcap)
    causal_end = past_len[:, None] + steps[None, :]  # (B, S)
    allowed = t[:, None, :] <= causal_end[:, :, None]
    if local_window_size > 0:
        allowed = allowed & (t[:, None, :] > causal_end[:, :, None] - local_window_size)
    logits = tf.where(allowed[:, None], logits, tf.constant(float("-inf"), tf.float32))
    if smooth_softmax or head_sink is not None:
        sink = tf.zeros([num_heads], tf.float32) if head_sink is None else tf.cast(head_sink, tf.float32)
        sink = tf.broadcast_to(sink[None, :, None, None], tf.stack([batch, num_heads, seq, 1]))
        probs = tf.nn.softmax(tf.concat((logits, sink), axis=-1), axis=-1)[..., :-1]
    else:
        probs = tf.nn.softmax(logits, axis=-1)
    y = tf.reshape(tf.transpose(tf.linalg.matmul(probs, vv), [0, 2, 1, 3]), tf.stack([batch, seq, num_heads * head]))
    return tf.cast(y, query.dtype), present_k, present_v
