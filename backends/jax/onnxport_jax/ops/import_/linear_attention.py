"""LinearAttention (opset 27): linear / gated / delta / gated_delta recurrences over packed heads.

The recurrence runs with ``lax.scan`` over the sequence in float32 (the spec's accumulation type);
``chunk_size`` is a tuning hint and does not change results.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "LinearAttention": {"float32": (5e-4, 1e-4, "the state accumulates over the sequence in another order than onnxruntime's kernel (measured 1.6e-4 relative, 1.2e-4 absolute)")},
}

_RULES = ("linear", "gated", "delta", "gated_delta")


def _heads(x, n):
    """[B, T, H*D] -> [T, B, H, D] (time first, for the scan)."""
    b, t, hd = x.shape
    return jnp.transpose(jnp.reshape(x, (b, t, n, hd // n)), (1, 0, 2, 3)).astype(jnp.float32)


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
    b, t, _ = query.shape
    dk = query.shape[-1] // q_num_heads
    dv = value.shape[-1] // kv_num_heads
    group = q_num_heads // kv_num_heads
    q, k, v = _heads(query, q_num_heads), _heads(key, kv_num_heads), _heads(value, kv_num_heads)
    # decay: per head [B, T, Hkv] or per key dim [B, T, Hkv*dk] -> [T, B, Hkv, 1 | dk]
    g = _heads(decay, kv_num_heads) if gated else jnp.zeros((t, 1, 1, 1), jnp.float32)
    # beta: [B, T, Hkv | 1] -> [T, B, Hkv | 1, 1]
    bt = _heads(beta, beta.shape[-1]) if delta else jnp.ones((t, 1, 1, 1), jnp.float32)
    if past_state is None:
        state0, state_dtype = jnp.zeros((b, kv_num_heads, dk, dv), jnp.float32), query.dtype
    else:
        state0, state_dtype = jnp.asarray(past_state, jnp.float32), past_state.dtype
    s = float(scale) if scale else 1.0 / np.sqrt(dk)

    def step(state, xs):
        q_t, k_t, v_t, g_t, b_t = xs
        if gated:
            state = state * jnp.exp(g_t)[..., None]
        if delta:
            v_t = b_t * (v_t - jnp.einsum("bhdm,bhd->bhm", state, k_t, precision=lax.Precision.HIGHEST))
        state = state + k_t[..., :, None] * v_t[..., None, :]
        read = jnp.repeat(state, group, axis=1) if group > 1 else state
        return state, s * jnp.einsum("bhd,bhdm->bhm", q_t, read, precision=lax.Precision.HIGHEST)

    state, out = lax.scan(step, state0, (q, k, v, g, bt))  # out [T, B, Hq, dv]
    out = jnp.reshape(jnp.transpose(out, (1, 0, 2, 3)), (b, t, q_num_heads * dv)).astype(query.dtype)
    return out, state.astype(state_dtype)
