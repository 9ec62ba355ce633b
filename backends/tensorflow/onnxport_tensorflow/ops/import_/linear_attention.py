"""LinearAttention (opset 27): linear / gated / delta / gated_delta recurrences over packed heads.

The recurrence runs with ``tf.scan`` over the sequence in float32 (the spec's accumulation type);
``chunk_size`` is a tuning hint and does not change results.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import tensor

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "LinearAttention": {"float32": (5e-4, 1e-4, "the state accumulates over the sequence in another order than onnxruntime's kernel (measured 1.7e-5 relative, 3.7e-4 absolute on values near 21)")},
}

_RULES = ("linear", "gated", "delta", "gated_delta")


def _heads(x, n):
    """[B, T, H*D] -> [T, B, H, D] (time first, for the scan)."""
    x = tensor(x)
    b, t = tf.shape(x)[0], tf.shape(x)[1]
    return tf.cast(tf.transpose(tf.reshape(x, tf.stack([b, t, n, -1])), (1, 0, 2, 3)), tf.float32)


@importer("LinearAttention", since=27)
def linear_attention(ctx, query, key, value, past_state=None, decay=None, beta=None, *,
                     chunk_size, kv_num_heads, q_num_heads, scale, update_rule):
    """Returns (output [B, T, Hq*dv], present_state [B, Hkv, dk, dv])."""
    rule = update_rule or "gated_delta"
    if rule not in _RULES:
        raise ctx.error(f"unknown update_rule {rule!r} (one of {', '.join(_RULES)})")
    if not q_num_heads or not kv_num_heads or q_num_heads % kv_num_heads:
        raise ctx.error(f"q_num_heads ({q_num_heads}) must be a positive multiple of kv_num_heads ({kv_num_heads})")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated != (decay is not None):
        raise ctx.error(f"update_rule {rule!r} {'needs' if gated else 'forbids'} the decay input")
    if delta != (beta is not None):
        raise ctx.error(f"update_rule {rule!r} {'needs' if delta else 'forbids'} the beta input")
    query, value = tensor(query), tensor(value)
    b, t = tf.shape(query)[0], tf.shape(query)[1]
    dk = int(query.shape[-1]) // q_num_heads
    dv = int(value.shape[-1]) // kv_num_heads
    group = q_num_heads // kv_num_heads
    q, k, v = _heads(query, q_num_heads), _heads(key, kv_num_heads), _heads(value, kv_num_heads)
    g = _heads(decay, kv_num_heads) if gated else tf.zeros(tf.stack([t, 1, 1, 1]), tf.float32)
    bt = _heads(beta, int(tensor(beta).shape[-1])) if delta else tf.ones(tf.stack([t, 1, 1, 1]), tf.float32)
    if past_state is None:
        state0, state_dtype = tf.zeros(tf.stack([b, kv_num_heads, dk, dv]), tf.float32), query.dtype
    else:
        past_state = tensor(past_state)
        state0, state_dtype = tf.cast(past_state, tf.float32), past_state.dtype
    s = float(scale) if scale else 1.0 / np.sqrt(dk)

    def step(acc, xs):
        state, _ = acc
        q_t, k_t, v_t, g_t, b_t = xs
        if gated:
            state = state * tf.exp(g_t)[..., None]
        if delta:
            v_t = b_t * (v_t - tf.einsum("bhdm,bhd->bhm", state, k_t))
        state = state + k_t[..., :, None] * v_t[..., None, :]
        read = tf.repeat(state, group, axis=1) if group > 1 else state
        return state, s * tf.einsum("bhd,bhdm->bhm", q_t, read)

    init = (state0, tf.zeros(tf.stack([b, q_num_heads, dv]), tf.float32))
    states, out = tf.scan(step, (q, k, v, g, bt), initializer=init)  # out [T, B, Hq, dv]
    state = states[-1]
    out = tf.cast(tf.reshape(tf.transpose(out, (1, 0, 2, 3)), tf.stack([b, t, q_num_heads * dv])), query.dtype)
    return out, tf.cast(state, state_dtype)
