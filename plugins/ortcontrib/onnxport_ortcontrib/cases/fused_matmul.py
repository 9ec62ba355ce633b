"""Cases of FusedMatMul (com.microsoft)."""

from __future__ import annotations

from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["FusedMatMul"],
    {
        "float32": (1e-4, 1e-5, "a dot product of up to 16 terms, summed in another order"),
        "float16": (5e-3, 5e-3, "onnxruntime accumulates half products in float32"),
    },
)


def _operand(gen, shape, trans, trans_batch, dtype):
    """Random data stored so that the op's permutation turns it into ``shape``."""
    s = list(shape)
    if trans:
        s[-1], s[-2] = s[-2], s[-1]
    if trans_batch and len(s) > 2:
        s = [s[-2]] + s[:-2] + [s[-1]]
    return normal(gen, s, dtype)


def fused_matmul_cases():
    out = []
    for k, t in FLOATS.items():
        g = rng(f"fused_matmul_{k}")
        out.append(case(f"2d_{k}", [normal(g, (4, 6), t), normal(g, (6, 5), t)]))
        out.append(case(f"alpha_trans_{k}", [normal(g, (6, 4), t), normal(g, (5, 6), t)],
                        {"alpha": 0.25, "transA": 1, "transB": 1}))
        out.append(case(f"broadcast_{k}", [normal(g, (2, 3, 4, 6), t), normal(g, (6, 5), t)], {"transA": 0}))
        for ta, tb, tba, tbb in [(0, 0, 1, 0), (0, 1, 0, 1), (1, 0, 1, 1), (1, 1, 1, 1)]:
            a = _operand(g, (3, 2, 4, 6), ta, tba, t)
            b = _operand(g, (3, 2, 6, 5), tb, tbb, t)
            out.append(case(f"trans{ta}{tb}_batch{tba}{tbb}_{k}", [a, b],
                            {"alpha": 1.5, "transA": ta, "transB": tb, "transBatchA": tba, "transBatchB": tbb}))
    return out
