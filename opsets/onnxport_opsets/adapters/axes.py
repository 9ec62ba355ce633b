"""``axes``/``split`` attributes that became inputs: Squeeze, Unsqueeze, Reduce*, Split."""

from __future__ import annotations

from .._base import adapter, attr_to_input


@adapter("Squeeze", 11)
@adapter("Unsqueeze", 11)
@adapter("ReduceSum", 11)
def axes_to_input_13(node, ctx):
    return attr_to_input(node, ctx, "axes", 1)


@adapter("ReduceMean", 13)
@adapter("ReduceMax", 13)
@adapter("ReduceMin", 13)
@adapter("ReduceProd", 13)
@adapter("ReduceL1", 13)
@adapter("ReduceL2", 13)
@adapter("ReduceLogSum", 13)
@adapter("ReduceLogSumExp", 13)
@adapter("ReduceSumSquare", 13)
def reduce_axes_to_input_18(node, ctx):
    return attr_to_input(node, ctx, "axes", 1)


@adapter("Split", 11)
def split_to_input_13(node, ctx):
    return attr_to_input(node, ctx, "split", 1)
