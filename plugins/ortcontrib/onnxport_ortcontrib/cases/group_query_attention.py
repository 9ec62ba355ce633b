"""Cases of GroupQueryAttention (com.microsoft, what onnxruntime's model builder writes for
Llama, Mistral, Phi, Qwen and Gemma): prompts, decoding steps with a shared KV buffer and
per-row lengths (``seqlens_k``), rotary inside the op, local windows, softcap, smooth softmax."""

from __future__ import annotations

import numpy as np

from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["GroupQueryAttention"],
    {
        "float32": (1e-4, 1e-5, "a softmax and two products, each summed in another order"),
        "float16": (1e-2, 5e-3, "onnxruntime rounds rotated Q and K to half and accumulates in float32"),
    },
)

_N, _KV, _H = 4, 2, 16


def _caches(gen, positions, rdim, dtype):
    angles = gen.standard_normal((positions, rdim // 2)) * 2
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def group_query_attention_cases():
    out = []
    b, s = 2, 5
    attrs = {"num_heads": _N, "kv_num_heads": _KV}
    for k, t in FLOATS.items():
        g = rng(f"gqa_{k}")
        q, key, value = normal(g, (b, s, _N * _H), t), normal(g, (b, s, _KV * _H), t), normal(g, (b, s, _KV * _H), t)
        seqlens = np.full((b,), s - 1, np.int32)
        total = np.array(s, np.int32)
        prompt = [q, key, value, None, None, seqlens, total]
        out.append(case(f"prompt_{k}", prompt, attrs, num_outputs=3))
        out.append(case(f"prompt_scale_softcap_{k}", prompt, {**attrs, "scale": 0.2, "softcap": 2.0}, num_outputs=3))
        out.append(case(f"prompt_local_window_{k}", prompt, {**attrs, "local_window_size": 2}, num_outputs=3))
        out.append(case(f"prompt_smooth_softmax_{k}", prompt, {**attrs, "smooth_softmax": 1}, num_outputs=3))
        packed = np.concatenate([q, key, value], axis=-1)
        out.append(case(f"prompt_packed_qkv_{k}", [packed, None, None, None, None, seqlens, total], attrs,
                        num_outputs=3))
        cos, sin = _caches(g, 32, _H, t)
        out.append(case(f"prompt_rotary_{k}", [*prompt, cos, sin], {**attrs, "do_rotary": 1}, num_outputs=3))
        out.append(case(f"prompt_rotary_interleaved_{k}", [*prompt, cos, sin],
                        {**attrs, "do_rotary": 1, "rotary_interleaved": 1}, num_outputs=3))
        # one decoding step over a shared buffer of 12 positions, rows at different lengths
        buf = 12
        pk, pv = normal(g, (b, _KV, buf, _H), t), normal(g, (b, _KV, buf, _H), t)
        q1, k1, v1 = normal(g, (b, 1, _N * _H), t), normal(g, (b, 1, _KV * _H), t), normal(g, (b, 1, _KV * _H), t)
        past_lens = np.array([6, 3], np.int32)
        step = [q1, k1, v1, pk, pv, past_lens, np.array(past_lens.max() + 1, np.int32)]
        out.append(case(f"decode_shared_buffer_{k}", step, attrs, num_outputs=3))
        out.append(case(f"decode_rotary_window_{k}", [*step, cos, sin],
                        {**attrs, "do_rotary": 1, "local_window_size": 3, "softcap": 5.0}, num_outputs=3))
        out.append(case(f"decode_position_ids_{k}", [*step, cos, sin, np.array([[9], [2]], np.int64)],
                        {**attrs, "do_rotary": 1}, num_outputs=3))
        sink = normal(g, (_N,), t)
        out.append(case(f"prompt_head_sink_{k}", [*prompt, None, None, None, None, sink], attrs, num_outputs=3))
        # past without spare room: present grows to total_sequence_length
        p = 4
        step2 = [q1, k1, v1, pk[:, :, :p], pv[:, :, :p], np.full((b,), p, np.int32), np.array(p + 1, np.int32)]
        out.append(case(f"decode_growing_{k}", step2, attrs, num_outputs=3))
        # a second chunk of a prompt (S > 1 with a past; onnxruntime allows it for batch 1)
        q3, k3, v3 = normal(g, (1, 3, _N * _H), t), normal(g, (1, 3, _KV * _H), t), normal(g, (1, 3, _KV * _H), t)
        chunk = [q3, k3, v3, pk[:1], pv[:1], np.full((1,), 4 + 3 - 1, np.int32), np.array(7, np.int32)]
        out.append(case(f"chunked_prefill_{k}", [*chunk, cos, sin], {**attrs, "do_rotary": 1}, num_outputs=3))
    return out
