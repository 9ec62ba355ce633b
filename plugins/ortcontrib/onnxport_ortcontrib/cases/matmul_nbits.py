"""Cases of MatMulNBits (com.microsoft): 2-, 4- and 8-bit blockwise-quantized weights."""

from __future__ import annotations

import numpy as np

from ..opmath import pack_nbits
from ._common import FLOATS, case, normal, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["MatMulNBits"],
    {
        "float32": (1e-4, 1e-4, "a dot product over K (up to 80 terms) of dequantized weights, summed in another order"),
        "float16": (1e-2, 1e-2, "onnxruntime dequantizes half weights in half precision and accumulates in float32"),
    },
)


def _weights(gen, n, k, bits, block, zp_kind, dtype):
    """(B, scales, zero_points or None) for a random quantized (N, K) weight."""
    kb = -(-k // block)
    q = gen.integers(0, 2**bits, (n, kb * block))
    q[:, k:] = 0  # the padding of the last block
    b = pack_nbits(q.reshape(n, kb, block), bits)
    scales = (gen.random(n * kb) * 0.1 + 0.01).astype(dtype)
    if zp_kind == "packed":
        zp = pack_nbits(gen.integers(0, 2**bits, (n, kb)), bits).reshape(-1)
    elif zp_kind == "float":
        zp = (gen.random(n * kb) * (2**bits - 1)).astype(dtype)
    else:
        zp = None
    return b, scales, zp


def matmul_nbits_cases():
    out = []
    for k_name, t in FLOATS.items():
        g = rng(f"nbits_{k_name}")
        for bits in (2, 4, 8):
            for k, block in ((32, 16), (80, 32)):  # K a multiple of the block, and not
                for zp_kind in ("none", "packed", "float"):
                    if bits == 8 and zp_kind == "float":
                        continue  # onnxruntime's CPU kernel refuses float zero points for 8 bits
                    n = 6
                    b, scales, zp = _weights(g, n, k, bits, block, zp_kind, t)
                    a = normal(g, (2, 3, k), t)
                    out.append(case(f"b{bits}_k{k}_blk{block}_zp{zp_kind}_{k_name}", [a, b, scales, zp],
                                    {"K": k, "N": n, "bits": bits, "block_size": block}))
        n, k, block = 5, 64, 16
        b, scales, zp = _weights(g, n, k, 4, block, "packed", t)
        a = normal(g, (3, k), t)
        bias = normal(g, (n,), t)
        out.append(case(f"bias_{k_name}", [a, b, scales, zp, None, bias], {"K": k, "N": n, "block_size": block}))
        out.append(case(f"bias_no_zp_{k_name}", [a, b, scales.reshape(n, -1), None, None, bias],
                        {"K": k, "N": n, "block_size": block, "accuracy_level": 4}))
        out.append(case(f"vector_{k_name}", [a[0], b, scales], {"K": k, "N": n, "block_size": block}))
        out.append(case(f"block128_{k_name}", [normal(g, (1, 2, 128), t), *_weights(g, 4, 128, 4, 128, "packed", t)],
                        {"K": 128, "N": 4, "block_size": 128}))
        # g_idx (act order): column k is dequantized with group g_idx[k]'s scale and zero point
        g_idx = g.permutation(np.arange(k) // block).astype(np.int32)
        _, _, zp_float = _weights(g, n, k, 4, block, "float", t)
        out.append(case(f"g_idx_{k_name}", [a, b, scales, None, g_idx], {"K": k, "N": n, "block_size": block}))
        out.append(case(f"g_idx_float_zp_{k_name}", [a, b, scales, zp_float, g_idx], {"K": k, "N": n, "block_size": block}))
        out.append(case(f"g_idx_packed_zp_{k_name}", [a, b, scales, zp, g_idx], {"K": k, "N": n, "block_size": block}))
    return out
