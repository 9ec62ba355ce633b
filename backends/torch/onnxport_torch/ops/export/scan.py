"""cumsum, topk, sort (-> CumSum, TopK)."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import Sample, exporter


@exporter("aten.cumsum.default", samples=[Sample(lambda x: x.cumsum(1), (torch.randn(2, 5),), emits=("CumSum",)),
                                          Sample(lambda x: x.cumsum(-1), (torch.randint(0, 4, (2, 5)),), emits=("CumSum",), name="int")])
def cumsum(g, x, dim, *, dtype=None):
    x = g.cast(x, g.out_dtype())
    return g.op("CumSum", x, g.const(np.asarray(g.axis(dim, g.rank(x)), dtype=np.int64)))


@exporter("aten.topk.default", samples=[Sample(lambda x: torch.topk(x, 3, dim=1), (torch.randn(2, 7),), emits=("TopK",)),
                                        Sample(lambda x: torch.topk(x, 2, largest=False).values, (torch.randn(2, 7),), emits=("TopK",), name="smallest")])
def topk(g, x, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - the ATen name
    kv = g.ints([k])
    return g.op("TopK", x, kv, axis=g.axis(dim, g.rank(x)), largest=int(largest), sorted=int(sorted), outputs=2)
