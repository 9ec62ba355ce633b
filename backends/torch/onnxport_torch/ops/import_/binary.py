"""Broadcasting binary arithmetic and the variadic Sum/Mean/Max/Min."""

from __future__ import annotations

import torch

from onnxport import importer


@importer("Add", since=14)
def add(ctx, a, b):
    return torch.add(a, b)


@importer("Mul", since=14)
def mul(ctx, a, b):
    return torch.mul(a, b)


@importer("Sum", since=13)
def sum_(ctx, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out
