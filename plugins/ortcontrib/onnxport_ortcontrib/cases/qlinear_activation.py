"""Cases of QLinearSigmoid and QLinearLeakyRelu (com.microsoft): every value of the 8-bit type
through dequantize -> activation -> quantize; integer outputs equal onnxruntime's exactly."""

from __future__ import annotations

import numpy as np

from ._common import case, rng

#: integer outputs compare exactly (the testkit's default for integer dtypes); no entry needed
TEST_TOLERANCES: dict[str, dict[str, tuple[float, float, str]]] = {}


def _cases(op: str, attrs_list):
    out = []
    g = rng(f"qlinear_{op}")
    for dt in (np.uint8, np.int8):
        info = np.iinfo(dt)
        x = np.arange(info.min, info.max + 1).astype(dt).reshape(16, 16)
        for i in range(3):
            xs = np.array(g.random() * 0.1 + 0.001, np.float32)
            ys = np.array(g.random() * 0.01 + 1 / 256, np.float32)
            xz = np.array(g.integers(info.min, info.max + 1), dt)
            yz = np.array(g.integers(info.min, info.max + 1), dt)
            for j, attrs in enumerate(attrs_list):
                out.append(case(f"{np.dtype(dt).name}_{i}_{j}", [x, xs, xz, ys, yz], attrs))
    return out


def qlinear_sigmoid_cases():
    return _cases("sigmoid", [{}])


def qlinear_leaky_relu_cases():
    return _cases("leaky_relu", [{}, {"alpha": 0.2}])
