"""Cases of GatherBlockQuantized (com.microsoft): rows of a blockwise-quantized table (the model
builder's quantized embeddings), as uint8 holding 4- or 8-bit values."""

from __future__ import annotations

import numpy as np

from ..opmath import pack_nbits
from ._common import FLOATS, case, rng, tolerances

TEST_TOLERANCES = tolerances(
    ["GatherBlockQuantized"],
    {
        "float32": (1e-6, 1e-7, "one product per value"),
        "float16": (1e-3, 1e-3, "onnxruntime computes (q - zero_point) * scale in half precision"),
    },
)


def gather_block_quantized_cases():
    out = []
    vocab, k = 10, 64
    for name, t in FLOATS.items():
        g = rng(f"gbq_{name}")
        for bits in (4, 8):
            for block in (16, 32):
                q = g.integers(0, 2**bits, (vocab, k))
                data = pack_nbits(q, bits) if bits == 4 else q.astype(np.uint8)
                scales = (g.random((vocab, k // block)) * 0.1 + 0.01).astype(t)
                zq = g.integers(0, 2**bits, (vocab, k // block))
                zp = pack_nbits(zq, bits) if bits == 4 else zq.astype(np.uint8)
                idx = g.integers(0, vocab, (2, 3)).astype(np.int64)
                attrs = {"bits": bits, "block_size": block, "quantize_axis": 1}
                out.append(case(f"b{bits}_blk{block}_{name}", [data, idx, scales], attrs))
                out.append(case(f"b{bits}_blk{block}_zp_{name}", [data, idx, scales, zp], attrs))
        q = g.integers(0, 16, (vocab, k))
        scales = (g.random((vocab, k // 16)) * 0.1).astype(t)
        out.append(case(f"int32_indices_negative_axis_{name}",
                        [pack_nbits(q, 4), np.array([9, 0, -1], np.int32), scales],
                        {"block_size": 16, "quantize_axis": -1}))
    return out
