"""GroupQueryAttention (com.microsoft) for JAX: causal attention of N query heads over
``kv_num_heads`` shared K/V heads, with the KV cache in a buffer whose rows hold ``seqlens_k + 1``
valid positions each. ``total_sequence_length`` decides the present buffer's length, so it must
be known at trace time (a constant, or the model run without ``jax.jit``, which the backend's
runner falls back to); ``seqlens_k`` may be traced."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import group_query_attention as C
from ..cases.group_query_attention import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from .rotary import rotate


def _heads(x, n):
    b, s, _ = x.shape
    return jnp.swapaxes(jnp.reshape(x, (b, s, n, -1)), 1, 2)


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
    batch, seq = query.shape[0], query.shape[1]
    if key is None:  # packed (B, S, (N + 2 * N_kv) * H)
        head = query.shape[2] // (num_heads + 2 * kv_num_heads)
        query, key, value = jnp.split(query, [num_heads * head, (num_heads + kv_num_heads) * head], axis=-1)
    head = query.shape[2] // num_heads
    tsl = ctx.const(6)
    if tsl is None:
        tsl = ctx.concrete(total_sequence_length, "total_sequence_length (the present buffer's length)")
    total = int(tsl.reshape(-1)[0])
    q, k, v = _heads(query, num_heads), _heads(key, kv_num_heads), _heads(value, kv_num_heads)
    lengths = jnp.reshape(seqlens_k, (-1,)).astype(jnp.int32) + 1
    past_len = jnp.zeros_like(lengths) if seq == total else lengths - seq
    if do_rotary:
        if cos_cache is None or sin_cache is None:
            raise ctx.error("GroupQueryAttention with do_rotary=1 needs cos_cache and sin_cache")
        pos = (position_ids if position_ids is not None
               else past_len[:, None] + jnp.arange(seq, dtype=jnp.int32)[None, :])
        rdim = cos_cache.shape[1] * 2
        q = rotate(q, pos, cos_cache, sin_cache, rdim, rotary_interleaved)
        k = rotate(k, pos, cos_cache, sin_cache, rdim, rotary_interleaved)
    buffer = past_key.shape[2] if past_key is not None else 0
    length = max(total, buffer)
    t = jnp.arange(length, dtype=jnp.int32)[None, :]  # (1, T)
    rel = t - past_len[:, None]  # (B, T): index into the new keys
    new_here = (rel >= 0) & (rel < seq)
    idx = jnp.clip(rel, 0, seq - 1)[:, None, :, None]

    def present(past, new):
        out = jnp.where(new_here[:, None, :, None], jnp.take_along_axis(new, idx, axis=2), jnp.zeros((), new.dtype))
        if past is not None:
            padded = jnp.pad(past, ((0, 0), (0, 0), (0, length - buffer), (0, 0)))
            out = jnp.where((t < past_len[:, None])[:, None, :, None], padded, out)
        return out

    present_k, present_v = present(past_key, k), present(past_value, v)
    group = num_heads // kv_num_heads
    f32 = jnp.float32
    kk = jnp.repeat(present_k, group, axis=1).astype(f32)
    vv = jnp.repeat(present_v, group, axis=1).astype(f32)
    logits = jnp.matmul(q.astype(f32), jnp.swapaxes(kk, -1, -2)) * (scale or 1.0 / math.sqrt(head))
    if softcap > 0:
        logits = softcap * jnp.tanh(logits / softcap)
    causal_end = past_len[:, None] + jnp.arange(seq, dtype=jnp.int32)[None, :]  # (B, S)
    allowed = t[:, None, :] <= causal_end[:, :, None]
    if local_window_size > 0:
        allowed = allowed & (t[:, None, :] > causal_end[:, :, None] - local_window_size)
    logits = jnp.where(allowed[:, None], logits, -jnp.inf)
    if smooth_softmax or head_sink is not None:
        sink = jnp.zeros((num_heads,), f32) if head_sink is None else head_sink.astype(f32)
        sink = jnp.broadcast_to(sink[None, :, None, None], (batch, num_heads, seq, 1))
        probs = jax.nn.softmax(jnp.concatenate((logits, sink), axis=-1), axis=-1)[..., :-1]
    else:
        probs = jax.nn.softmax(logits, axis=-1)
    y = jnp.reshape(jnp.swapaxes(jnp.matmul(probs, vv), 1, 2), (batch, seq, num_heads * head)).astype(query.dtype)
    return y, present_k, present_v
