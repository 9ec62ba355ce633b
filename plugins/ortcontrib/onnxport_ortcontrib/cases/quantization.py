"""Cases of MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft, what onnxruntime's
dynamic quantizer writes): an integer product, exact, then scaled to float."""

from __future__ import annotations

import numpy as np

from ._common import case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["MatMulIntegerToFloat", "DynamicQuantizeMatMul"],
    {
        "float32": (1e-6, 1e-6, "the int32 product is exact; one or two float products and a sum round"),
        "float16": (2e-3, 2e-3, "the scale products round to half"),
    },
)


def matmul_integer_to_float_cases():
    out = []
    g = rng("matmul_integer_to_float")
    for ta, tb in ((np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8)):
        a = g.integers(np.iinfo(ta).min, np.iinfo(ta).max + 1, (2, 3, 16)).astype(ta)
        b = g.integers(np.iinfo(tb).min, np.iinfo(tb).max + 1, (16, 5)).astype(tb)
        name = f"{np.dtype(ta).name}_{np.dtype(tb).name}"
        a_scale = np.array(0.02, np.float32)
        b_scale = np.array(0.03, np.float32)
        out.append(case(f"{name}_scales", [a, b, a_scale, b_scale]))
        azp, bzp = np.array(3, ta), np.array(-2 if tb == np.int8 else 7, tb)
        bias = normal(g, (5,), np.float32)
        out.append(case(f"{name}_zero_points_bias", [a, b, a_scale, b_scale, azp, bzp, bias]))
        per_col = (g.random(5) * 0.05 + 0.01).astype(np.float32)
        bzp_col = g.integers(0, 5, (5,)).astype(tb)
        out.append(case(f"{name}_per_column", [a, b, a_scale, per_col, None, bzp_col]))
    a = g.integers(0, 256, (4, 16)).astype(np.uint8)
    b = g.integers(-128, 128, (16, 5)).astype(np.int8)
    out.append(case("float16", [a, b, np.array(0.02, np.float16), (g.random(5) * 0.05).astype(np.float16),
                                None, None, normal(g, (5,), np.float16)]))
    return out


def dynamic_quantize_matmul_cases():
    out = []
    g = rng("dynamic_quantize_matmul")
    for tb in (np.int8, np.uint8):
        info = np.iinfo(tb)
        name = np.dtype(tb).name
        a = normal(g, (2, 3, 32), np.float32)
        b = g.integers(info.min, info.max + 1, (32, 6)).astype(tb)
        out.append(case(f"{name}_per_tensor", [a, b, np.array(0.02, np.float32)]))
        per_col = (g.random(6) * 0.05 + 0.01).astype(np.float32)
        out.append(case(f"{name}_per_column_zero_point", [a, b, per_col, np.array(3, tb)]))
        out.append(case(f"{name}_bias", [a, b, per_col, None, normal(g, (6,), np.float32)]))
        positive = np.abs(normal(g, (4, 32), np.float32))  # the range still includes 0
        out.append(case(f"{name}_positive_input", [positive, b, np.array(0.02, np.float32)]))
    return out
