"""Older forms of nn and signal ops: DFT-17's axis attribute becomes DFT-20's axis input."""

from __future__ import annotations

import numpy as np

from .._base import adapter, attr


@adapter("DFT", 17)
def dft_axis_to_input(node, ctx):
    axis = attr(node, "axis", 1)
    inputs = list(node.inputs) + [None] * (2 - len(node.inputs))
    inputs = inputs[:2] + [ctx.constant(np.asarray(axis, np.int64), f"{node.name or 'dft'}_axis")]
    return ctx.rebuild(node, inputs=inputs, drop=("axis",))
