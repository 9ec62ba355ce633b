"""GroupQueryAttention (com.microsoft) for torch: causal attention of N query heads over
``kv_num_heads`` shared K/V heads, with the KV cache in a buffer whose rows hold ``seqlens_k + 1``
valid positions each."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from .. import DOMAIN
from ..cases import group_query_attention as C
from ..cases.group_query_attention import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from .rotary import rotate


def _heads(x, n):
    b, s, _ = x.shape
    return x.reshape(b, s, n, -1).transpose(1, 2)


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
    at their positions first; ``local_window_size`` keeps the last ``local_window_size`` keys (the query's own included); ``softcap``
    squashes logits to ``softcap * tanh(x / softcap)``; ``smooth_softmax`` and ``head_sink`` add
    a zero (or the head's sink) logit to the softmax's denominator."""
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
        query, key, value = torch.split(query, [num_heads * head, kv_num_heads * head, kv_num_heads * head], dim=-1)
    head = query.shape[2] // num_heads
    total = int(total_sequence_length.reshape(-1)[0])
    q, k, v = _heads(query, num_heads), _heads(key, kv_num_heads), _heads(value, kv_num_heads)
    lengths = seqlens_k.long().reshape(-1) + 1  # (B,) valid keys per row
    first_prompt = seq == total
    past_len = torch.zeros_like(lengths) if first_prompt else lengths - seq
    if do_rotary:
        if cos_cache is None or sin_cache is None:
            raise ctx.error("GroupQueryAttention with do_rotary=1 needs cos_cache and sin_cache")
        pos = (position_ids.long() if position_ids is not None
               else past_len[:, None] + torch.arange(seq, device=query.device)[None, :])
        rdim = cos_cache.shape[1] * 2
        q = rotate(q, pos, cos_cache, sin_cache, rdim, rotary_interleaved)
        k = rotate(k, pos, cos_cache, sin_cache, rdim, rotary_interleaved)
    buffer = past_key.shape[2] if past_key is not None else 0
    length = max(total, buffer)
    t = torch.arange(length, device=query.device)[None, :]  # (1, T)
    rel = t - past_len[:, None]  # (B, T): index into the new keys
    new_here = (rel >= 0) & (rel < seq)
    idx = rel.clamp(0, seq - 1)[:, None, :, None].expand(batch, kv_num_heads, length, head)

    def present(past, new):
        from_new = torch.gather(new, 2, idx)
        out = torch.where(new_here[:, None, :, None], from_new, torch.zeros_like(from_new))
        if past is not None:
            padded = torch.nn.functional.pad(past, (0, 0, 0, length - buffer))
            out = torch.where((t < past_len[:, None])[:, None, :, None], padded, out)
        return out

    present_k, present_v = present(past_key, k), present(past_value, v)
    group = num_heads // kv_num_heads
    kk = present_k.repeat_interleave(group, dim=1).float()
    vv = present_v.repeat_interleave(group, dim=1).float()
    logits = (q.float() @ kk.transpose(-1, -2)) * (scale or 1.0 / math.sqrt(head))
    if softcap > 0:
        logits = softcap * torch.tanh(logits / softcap)
    # query i of row b sees keys [start, past_b + i]
    causal_end = past_len[:, None] + torch.arange(seq, device=query.device)[None, :]  # (B, S)
    allowed = t[:, None, :] <= causal_end[:, :, None]  # (B, S, T)
    if local_window_size > 0:
        allowed = allowed & (t[:, None, :] > causal_end[:, :, None] - local_window_size)
    logits = logits.masked_fill(~allowed[:, None], float("-inf"))
    if smooth_softmax or head_sink is not None:
        sink = (torch.zeros(num_heads, device=query.device) if head_sink is None else head_sink.float())
        sink = sink[None, :, None, None].expand(batch, num_heads, seq, 1)
        probs = torch.softmax(torch.cat((logits, sink), dim=-1), dim=-1)[..., :-1]
    else:
        probs = torch.softmax(logits, dim=-1)
    y = (probs @ vv).transpose(1, 2).reshape(batch, seq, num_heads * head).to(query.dtype)
    return y, present_k, present_v
