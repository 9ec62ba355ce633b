"""Cases of RotaryEmbedding (com.microsoft form: cos/sin caches indexed by position ids)."""

from __future__ import annotations

import numpy as np

from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["RotaryEmbedding"],
    {
        "float32": (1e-5, 1e-5, "two products and a sum per value"),
        "float16": (2e-3, 2e-3, "onnxruntime rounds each half product; a framework may round once"),
    },
)


def rotary_cases():
    out = []
    b, s, n, h, max_pos = 2, 4, 2, 8, 12
    for k, t in FLOATS.items():
        g = rng(f"rotary_{k}")
        for layout in ("bsd", "bnsh"):
            for interleaved in (0, 1):
                for rdim in (0, 4):
                    x = normal(g, (b, s, n * h) if layout == "bsd" else (b, n, s, h), t)
                    angles = g.standard_normal((max_pos, (rdim or h) // 2)) * 3
                    cos, sin = np.cos(angles).astype(t), np.sin(angles).astype(t)
                    attrs = {"interleaved": interleaved}
                    if rdim:
                        attrs.update(rotary_embedding_dim=rdim, num_heads=n)
                    pos = g.integers(0, max_pos, (b, s)).astype(np.int64)
                    out.append(case(f"{layout}_i{interleaved}_r{rdim}_{k}", [x, pos, cos, sin], attrs))
        # a position offset: one id, the sequence continues from it (decoding with a cache)
        x = normal(g, (b, s, n * h), t)
        angles = g.standard_normal((max_pos, h // 2))
        cos, sin = np.cos(angles).astype(t), np.sin(angles).astype(t)
        out.append(case(f"offset_{k}", [x, np.array([5], np.int64), cos, sin], {"num_heads": n}))
        out.append(case(f"scale_ignored_{k}", [x, np.array([0], np.int64), cos, sin], {"scale": 2.0}))
    return out
