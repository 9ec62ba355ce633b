"""Cases of Gelu, FastGelu, BiasGelu, QuickGelu and BiasAdd (com.microsoft)."""

from __future__ import annotations

import numpy as np

from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd"],
    {
        "float32": (1e-5, 1e-5, "onnxruntime evaluates erf/tanh/exp with its own vectorised approximations"),
        "float16": (2e-3, 2e-3, "onnxruntime computes in float32 and rounds once; a framework may round in between"),
    },
)


def _inputs(name: str, dtype, *shapes):
    gen = rng(name)
    return [normal(gen, s, dtype, 2.0) for s in shapes]


def gelu_cases():
    return [case(f"{k}", _inputs(f"gelu_{k}", t, (2, 3, 16))) for k, t in FLOATS.items()]


def fast_gelu_cases():
    out = []
    for k, t in FLOATS.items():
        out.append(case(f"{k}", _inputs(f"fast_gelu_{k}", t, (2, 3, 16))))
        out.append(case(f"bias_{k}", _inputs(f"fast_gelu_bias_{k}", t, (2, 3, 16), (16,))))
    return out


def bias_gelu_cases():
    return [case(f"{k}", _inputs(f"bias_gelu_{k}", t, (2, 5, 12), (12,))) for k, t in FLOATS.items()]


def quick_gelu_cases():
    out = []
    for k, t in FLOATS.items():
        out.append(case(f"{k}", _inputs(f"quick_gelu_{k}", t, (3, 16))))
        out.append(case(f"alpha_{k}", _inputs(f"quick_gelu_alpha_{k}", t, (2, 4, 8)), {"alpha": 1.0}))
        out.append(case(f"negative_alpha_{k}", _inputs(f"quick_gelu_neg_{k}", t, (2, 4, 8)), {"alpha": -0.5}))
    return out


def bias_add_reference(x, bias, skip):
    """X + bias + skip, summed in float32 and rounded once (onnxruntime's CPU build has no
    BiasAdd kernel: its CUDA kernel is the definition)."""
    return (x.astype(np.float32) + bias.astype(np.float32) + skip.astype(np.float32)).astype(x.dtype)


def bias_add_cases():
    return [case(f"{k}", _inputs(f"bias_add_{k}", t, (2, 3, 8), (8,), (2, 3, 8)), reference=bias_add_reference)
            for k, t in FLOATS.items()]
