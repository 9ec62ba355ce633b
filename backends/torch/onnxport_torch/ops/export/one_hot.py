"""one_hot -> OneHot."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from onnxport import Sample, exporter


@exporter(
    "aten.one_hot.default",
    samples=[Sample(lambda i: F.one_hot(i, 5), (torch.tensor([0, 3, 4, 1]),), emits=("OneHot",)),
             Sample(lambda i: F.one_hot(i, 4).float(), (torch.randint(0, 4, (2, 3)),), emits=("OneHot",), name="2d"),
             Sample(lambda i: F.one_hot(i[0], 3), (torch.tensor([2]),), emits=("OneHot",), name="scalar")],
)
def one_hot(g, x, num_classes=-1):
    """int64 one-hot rows on a new last axis. torch rejects indices out of range; ONNX counts
    negative ones from the end and gives zero rows for the others."""
    if num_classes < 0:
        raise g.error("one_hot without num_classes depends on the data (max + 1); pass num_classes")
    depth = g.const(np.asarray(num_classes, dtype=np.int64))
    values = g.const(np.asarray([0, 1], dtype=np.int64))
    if g.rank(x) == 0:  # OneHot takes indices of rank >= 1
        y = g.op("OneHot", g.op("Unsqueeze", x, g.const(np.asarray([0], dtype=np.int64))), depth, values, axis=-1)
        return g.op("Squeeze", y, g.const(np.asarray([0], dtype=np.int64)))
    return g.op("OneHot", x, depth, values, axis=-1)
