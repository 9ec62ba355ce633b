"""LinearAttention (opset 27): recurrent linear attention with a matrix state per KV head, for
decoding and prefill: the linear, gated (decay), delta (beta) and gated-delta update rules, GQA."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ...context import NodeContext

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "LinearAttention": {"float32": (5e-4, 1e-4, "the state accumulates over the sequence in another order than onnxruntime's kernel (measured 1.6e-4 relative, 1.2e-4 absolute)")},
}

_RULES = ("linear", "gated", "delta", "gated_delta")


def _heads(t: torch.Tensor, heads: int) -> torch.Tensor:
    """[B, T, H*D] -> [B, H, T, D]."""
    b, n, hidden = t.shape
    return t.reshape(b, n, heads, hidden // heads).transpose(1, 2)


@importer("LinearAttention", since=27)
def linear_attention(ctx: NodeContext, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     past_state: torch.Tensor | None = None, decay: torch.Tensor | None = None,
                     beta: torch.Tensor | None = None, *, chunk_size: int, kv_num_heads: int,
                     q_num_heads: int, scale: float, update_rule: str):
    """(output [B, T, Hq*dv], present_state [B, Hkv, dk, dv]), token by token in float32.

    chunk_size is a tuning hint for chunk-parallel kernels; the sequential recurrence computes
    the same values, so it is not used.
    """
    if update_rule not in _RULES:
        raise ctx.error(f"unknown update_rule {update_rule!r} (expected one of {', '.join(_RULES)})")
    if not q_num_heads or not kv_num_heads or q_num_heads <= 0 or kv_num_heads <= 0 \
            or q_num_heads % kv_num_heads:
        raise ctx.error(f"q_num_heads ({q_num_heads}) must be a positive multiple of kv_num_heads ({kv_num_heads})")
    gated = update_rule in ("gated", "gated_delta")
    delta = update_rule in ("delta", "gated_delta")
    if gated != (decay is not None):
        raise ctx.error(f"update_rule {update_rule!r} {'needs' if gated else 'takes no'} decay input")
    if delta != (beta is not None):
        raise ctx.error(f"update_rule {update_rule!r} {'needs' if delta else 'takes no'} beta input")
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() != 3:
            raise ctx.error(f"{name} must be rank 3 [B, T, H*D], got shape {tuple(t.shape)}")
        if t.shape[-1] % (q_num_heads if name == "query" else kv_num_heads):
            raise ctx.error(f"{name}'s last dim {t.shape[-1]} does not split into its heads")

    b, n, _ = query.shape
    hk, group = kv_num_heads, q_num_heads // kv_num_heads
    dk, dv = query.shape[-1] // q_num_heads, value.shape[-1] // kv_num_heads
    work = torch.float64 if query.dtype == torch.float64 else torch.float32
    # queries grouped under their KV head: [B, Hkv, G, T, dk] (query head h reads KV head h // G)
    q = _heads(query, q_num_heads).to(work).reshape(b, hk, group, n, dk)
    k = _heads(key, hk).to(work)
    v = _heads(value, hk).to(work)

    if decay is not None:
        if decay.dim() != 3 or decay.shape[-1] not in (hk, hk * dk):
            raise ctx.error(f"decay shape {tuple(decay.shape)} is not [B, T, {hk}] or [B, T, {hk * dk}]")
        # per head [B, Hkv, T, 1] or per key dim [B, Hkv, T, dk]
        g = _heads(decay, hk).to(work)
    if beta is not None:
        if beta.dim() != 3 or beta.shape[-1] not in (hk, 1):
            raise ctx.error(f"beta shape {tuple(beta.shape)} is not [B, T, {hk}] or [B, T, 1]")
        rate = _heads(beta, beta.shape[-1]).to(work)  # [B, Hkv or 1, T, 1]

    if past_state is not None:
        if tuple(past_state.shape) != (b, hk, dk, dv):
            raise ctx.error(f"past_state shape {tuple(past_state.shape)} is not ({b}, {hk}, {dk}, {dv})")
        state, state_dtype = past_state.to(work), past_state.dtype
    else:
        state = torch.zeros((b, hk, dk, dv), dtype=work, device=query.device)
        state_dtype = query.dtype
    s = float(scale) if scale else 1.0 / math.sqrt(dk)

    outs = []
    for t in range(n):
        k_t, v_t = k[:, :, t], v[:, :, t]                       # [B, Hkv, dk], [B, Hkv, dv]
        if gated:
            state = state * torch.exp(g[:, :, t]).unsqueeze(-1)  # decay over the key dim
        if delta:
            retrieved = torch.einsum("bhkv,bhk->bhv", state, k_t)
            v_t = rate[:, :, t] * (v_t - retrieved)
        state = state + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)
        outs.append(s * torch.einsum("bhgk,bhkv->bhgv", q[:, :, :, t], state))
    y = torch.stack(outs, dim=3) if outs else q.new_zeros((b, hk, group, 0, dv))
    # [B, Hkv, G, T, dv] -> [B, T, Hq*dv]
    y = y.reshape(b, q_num_heads, n, dv).transpose(1, 2).reshape(b, n, q_num_heads * dv)
    outputs = (y.to(query.dtype), state.to(state_dtype))
    return outputs[0] if ctx.num_outputs == 1 else outputs
