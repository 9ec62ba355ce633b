"""BatchNormalization's older forms."""

from __future__ import annotations

from .._base import adapter, attr


@adapter("BatchNormalization", 1, 6)
def bn_consumed_inputs(node, ctx):
    if attr(node, "spatial", 1) != 1:
        raise ValueError("BatchNormalization with spatial=0 is not supported")
    return ctx.rebuild(node, drop=("consumed_inputs", "is_test", "spatial"))


@adapter("BatchNormalization", 7)
def bn_spatial(node, ctx):
    if attr(node, "spatial", 1) != 1:
        raise ValueError("BatchNormalization with spatial=0 is not supported")
    return ctx.rebuild(node, drop=("spatial",))


@adapter("BatchNormalization", 9)
def bn_to_14(node, ctx):
    # opset 9 outputs mean/var/saved_mean/saved_var in training only; 14 keeps running mean/var
    extra = [o for o in node.outputs[1:] if o.uses() or o.is_graph_output()]
    if extra:
        raise ValueError("BatchNormalization-9 in training mode (extra outputs used) is not supported")
    new = ctx.rebuild(node)
    return new
