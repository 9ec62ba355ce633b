"""Cases of Attention and MultiHeadAttention (com.microsoft, what onnxruntime's transformer
optimizer writes for BERT, GPT-2, T5 and ViT)."""

from __future__ import annotations

import numpy as np

from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["Attention", "MultiHeadAttention"],
    {
        "float32": (1e-4, 1e-5, "projections, a softmax and two products, each summed in another order"),
        "float16": (1e-2, 5e-3, "onnxruntime rounds the projections to half before the softmax"),
    },
)


def attention_cases():
    out = []
    b, s, d, n = 2, 4, 16, 2
    for k, t in FLOATS.items():
        g = rng(f"attention_{k}")
        x = normal(g, (b, s, d), t)
        w = normal(g, (d, 3 * d), t, 0.3)
        bias = normal(g, (3 * d,), t, 0.1)
        out.append(case(f"plain_{k}", [x, w, bias], {"num_heads": n}))
        out.append(case(f"no_bias_scale_{k}", [x, w], {"num_heads": n, "scale": 0.5}))
        raw = (np.arange(s)[None, :] < np.array([[4], [2]])).astype(np.int32)
        out.append(case(f"mask_2d_{k}", [x, w, bias, raw], {"num_heads": n}))
        out.append(case(f"mask_end_{k}", [x, w, bias, np.array([3, 1], np.int32)], {"num_heads": n}))
        out.append(case(f"mask_end_start_{k}", [x, w, bias, np.array([4, 3, 0, 1], np.int32)], {"num_heads": n}))
        mask3 = (g.random((b, s, s)) > 0.3).astype(np.int32)
        mask3[..., 0] = 1
        out.append(case(f"mask_3d_{k}", [x, w, bias, mask3], {"num_heads": n}))
        out.append(case(f"unidirectional_{k}", [x, w, bias], {"num_heads": n, "unidirectional": 1}))
        sizes = [16, 16, 8]
        w2 = normal(g, (d, sum(sizes)), t, 0.3)
        out.append(case(f"qkv_sizes_{k}", [x, w2, normal(g, (sum(sizes),), t, 0.1)],
                        {"num_heads": n, "qkv_hidden_sizes": sizes}))
        ab = normal(g, (1, n, s, s), t)
        out.append(case(f"attention_bias_{k}", [x, w, bias, None, None, ab], {"num_heads": n}))
        # GPT-2 with a cache: past (2, B, N, P, H) in, present (2, B, N, P + S, H) out
        past = normal(g, (2, b, n, 3, d // n), t)
        out.append(case(f"past_present_{k}", [x, w, bias, None, past], {"num_heads": n, "unidirectional": 1},
                        num_outputs=2))
        raw_total = np.ones((b, 3 + s), np.int32)
        raw_total[1, :2] = 0  # left padding of the second row
        out.append(case(f"past_mask_{k}", [x, w, bias, raw_total, past], {"num_heads": n, "unidirectional": 1},
                        num_outputs=2))
    return out


def multi_head_attention_cases():
    out = []
    b, s, kv, d, n = 2, 3, 5, 16, 2
    h = d // n
    for k, t in FLOATS.items():
        g = rng(f"mha_{k}")
        q, key, value = normal(g, (b, s, d), t), normal(g, (b, kv, d), t), normal(g, (b, kv, d), t)
        bias = normal(g, (3 * d,), t, 0.1)
        out.append(case(f"cross_{k}", [q, key, value], {"num_heads": n}))
        out.append(case(f"bias_scale_{k}", [q, key, value, bias], {"num_heads": n, "scale": 0.3}))
        kpm = (np.arange(kv)[None, :] < np.array([[5], [3]])).astype(np.int32)
        out.append(case(f"key_padding_2d_{k}", [q, key, value, None, kpm], {"num_heads": n}))
        out.append(case(f"key_padding_1d_{k}", [q, key, value, None, np.array([4, 2], np.int32)], {"num_heads": n}))
        ab = normal(g, (b, 1, s, kv), t)
        out.append(case(f"attention_bias_{k}", [q, key, value, bias, None, ab], {"num_heads": n}))
        # keys and values already split into heads (B, N, L, H): T5 / Whisper cross attention
        k4, v4 = normal(g, (b, n, kv, h), t), normal(g, (b, n, kv, h), t)
        out.append(case(f"bnsh_kv_{k}", [q, k4, v4], {"num_heads": n}))
        # self attention with a cache: past (B, N, P, H), present (B, N, P + S, H)
        sk, sv = normal(g, (b, s, d), t), normal(g, (b, s, d), t)
        pk, pv = normal(g, (b, n, 4, h), t), normal(g, (b, n, 4, h), t)
        out.append(case(f"past_{k}", [q, sk, sv, bias, None, None, pk, pv], {"num_heads": n}, num_outputs=3))
        out.append(case(f"past_causal_{k}", [q, sk, sv, None, None, None, pk, pv],
                        {"num_heads": n, "unidirectional": 1}, num_outputs=3))
        out.append(case(f"causal_{k}", [q, sk, sv], {"num_heads": n, "unidirectional": 1}))
    return out
