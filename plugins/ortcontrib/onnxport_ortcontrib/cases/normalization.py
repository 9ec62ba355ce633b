"""Cases of SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft),
SimplifiedLayerNormalization (onnxruntime's, in the default domain) and EmbedLayerNormalization."""

from __future__ import annotations

import numpy as np

from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "SimplifiedLayerNormalization",
     "EmbedLayerNormalization"],
    {
        "float32": (1e-4, 1e-5, "a reduction over the hidden axis, summed in another order"),
        "float16": (5e-3, 5e-3, "onnxruntime keeps the sum and statistics in float32 and rounds the outputs once"),
    },
)


def skip_layer_norm_cases():
    out = []
    for k, t in FLOATS.items():
        g = rng(f"sln_{k}")
        x, skip = normal(g, (2, 3, 16), t), normal(g, (2, 3, 16), t)
        gamma, beta, bias = normal(g, (16,), t), normal(g, (16,), t), normal(g, (16,), t, 0.5)
        out.append(case(f"gamma_{k}", [x, skip, gamma]))
        out.append(case(f"beta_bias_{k}", [x, skip, gamma, beta, bias], {"epsilon": 1e-5}))
        out.append(case(f"bias_only_{k}", [x, skip, gamma, None, bias]))
        out.append(case(f"all_outputs_{k}", [x, skip, gamma, beta, bias], num_outputs=4))
        out.append(case(f"skip_2d_{k}", [x, skip[0], gamma, beta], num_outputs=4))
        out.append(case(f"skip_1sh_{k}", [x, skip[:1], gamma, beta, bias], num_outputs=4))
    return out


def skip_simplified_layer_norm_cases():
    out = []
    for k, t in FLOATS.items():
        g = rng(f"ssln_{k}")
        x, skip = normal(g, (2, 3, 16), t), normal(g, (2, 3, 16), t)
        gamma, bias = normal(g, (16,), t), normal(g, (16,), t, 0.5)
        out.append(case(f"gamma_{k}", [x, skip, gamma]))
        out.append(case(f"bias_{k}", [x, skip, gamma, bias], {"epsilon": 1e-6}))
        # outputs: output, mean (onnxruntime writes zeros: RMS normalization has no mean),
        # inv_std_var, input_skip_bias_sum
        out.append(case(f"all_outputs_{k}", [x, skip, gamma, bias], num_outputs=4))
        out.append(case(f"skip_2d_{k}", [x, skip[0], gamma], num_outputs=4))
        out.append(case(f"tokens_2d_{k}", [x[0], skip[0], gamma, bias], num_outputs=4))
    return out


def simplified_layer_norm_cases():
    out = []
    for k, t in FLOATS.items():
        g = rng(f"simplified_{k}")
        x = normal(g, (2, 3, 16), t)
        out.append(case(f"default_{k}", [x, normal(g, (16,), t)]))
        out.append(case(f"inv_std_{k}", [x, normal(g, (16,), t)], {"epsilon": 1e-6}, num_outputs=2))
        out.append(case(f"axis1_{k}", [x, normal(g, (3, 16), t)], {"axis": 1}, num_outputs=2))
    return out


def embed_layer_norm_cases():
    out = []
    for k, t in FLOATS.items():
        g = rng(f"embed_{k}")
        b, s, h, vocab, pos, seg = 2, 5, 16, 30, 8, 2
        ids = g.integers(0, vocab, (b, s)).astype(np.int32)
        seg_ids = g.integers(0, seg, (b, s)).astype(np.int32)
        word, position, segment = normal(g, (vocab, h), t), normal(g, (pos, h), t), normal(g, (seg, h), t)
        gamma, beta = normal(g, (h,), t), normal(g, (h,), t)
        mask = (np.arange(s)[None, :] < np.array([[5], [3]])).astype(np.int32)
        out.append(case(f"bert_{k}", [ids, seg_ids, word, position, segment, gamma, beta, mask], num_outputs=3))
        out.append(case(f"no_segment_no_mask_{k}", [ids, None, word, position, None, gamma, beta], num_outputs=3))
        out.append(case(f"mask_index_type0_{k}", [ids, seg_ids, word, position, segment, gamma, beta, mask],
                        {"mask_index_type": 0, "epsilon": 1e-5}, num_outputs=2))
        pos_1s = np.array([[3, 1, 0, 2, 7]], np.int32)
        pos_bs = g.integers(0, pos, (b, s)).astype(np.int32)
        out.append(case(f"position_ids_1s_{k}", [ids, seg_ids, word, position, segment, gamma, beta, mask, pos_1s],
                        num_outputs=3))
        out.append(case(f"position_ids_bs_{k}", [ids, None, word, position, None, gamma, beta, None, pos_bs],
                        num_outputs=3))
    return out
