"""constant_pad_nd -> Pad (negative pads crop)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from onnxport import Sample, exporter


@exporter(
    "aten.constant_pad_nd.default",
    samples=[Sample(lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), (torch.randn(2, 3, 4),), emits=("Pad",)),
             Sample(lambda x: F.pad(x, (-1, 2)), (torch.randn(2, 5),), emits=("Pad",), name="crop")],
)
def constant_pad_nd(g, x, pad, value=0):
    """torch lists (begin, end) pairs from the last dim back; ONNX all begins, then all ends."""
    rank = g.rank(x)
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = pad[2 * i]
        ends[rank - 1 - i] = pad[2 * i + 1]
    pads = g.ints(begins + ends) if not all(isinstance(p, int) for p in pad) else g.const(np.asarray(begins + ends, dtype=np.int64))
    return g.op("Pad", x, pads, g.scalar(value, x.dtype), mode="constant")
