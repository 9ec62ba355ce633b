"""Dilated convolutions: the SpaceToBatchND -> Conv -> BatchToSpaceND chains TF traces for them.

Keras (``tf.nn.convolution``) traces a dilated convolution as SpaceToBatchND -> [ExpandDims] ->
Conv2D or DepthwiseConv2dNative -> [Squeeze] -> BatchToSpaceND; the exporter emits it as one ONNX
Conv with the block shape as ``dilations`` (the SpaceToBatchND reads its input unchanged, the
BatchToSpaceND passes the Conv's result on). ``conv`` is the exporter's converter (its
``static`` answers trace-time values).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf


def chain(conv: Any, s2b: tf.Operation) -> tuple[tf.Operation, dict[str, Any], tf.Operation, list] | None:
    """``(conv op, its attributes, batch_to_space, ops between)`` when ``s2b`` starts the chain TF
    traces for a dilated convolution (SpaceToBatchND -> [ExpandDims] -> Conv2D or
    DepthwiseConv2dNative -> [Squeeze] -> BatchToSpaceND, one block shape): one ONNX Conv with
    the block shape as ``dilations`` and the paddings less the crops as pads. None for any
    other use of SpaceToBatchND."""

    def only(t: tf.Tensor) -> tf.Operation | None:
        users = t.consumers()
        return users[0] if len(users) == 1 else None

    between: list = []
    nxt = only(s2b.outputs[0])
    inserted = None
    if nxt is not None and nxt.type == "ExpandDims":  # Conv1D: N,W,C -> N,1,W,C
        axis = conv.static(nxt.inputs[1])
        if axis is None or int(axis) not in (1, -3) or s2b.outputs[0].shape.rank != 3:
            return None
        inserted, between = 0, [nxt]
        nxt = only(nxt.outputs[0])
    if nxt is None or nxt.type not in ("Conv2D", "DepthwiseConv2dNative"):
        return None
    conv_op = nxt
    between.append(conv_op)
    nxt = only(conv_op.outputs[0])
    if inserted is not None:
        if nxt is None or nxt.type != "Squeeze" or list(nxt.get_attr("squeeze_dims")) not in ([1], [-3]):
            return None
        between.append(nxt)
        nxt = only(nxt.outputs[0])
    if nxt is None or nxt.type != "BatchToSpaceND":
        return None
    b2s = nxt
    block, paddings = conv.static(s2b.inputs[1]), conv.static(s2b.inputs[2])
    block2, crops = conv.static(b2s.inputs[1]), conv.static(b2s.inputs[2])
    if any(v is None for v in (block, paddings, block2, crops)) or list(block) != list(block2):
        return None
    if conv_op.get_attr("data_format").decode() != "NHWC" or conv_op.get_attr("padding").decode() != "VALID":
        return None
    if list(conv_op.get_attr("strides")) != [1, 1, 1, 1] or list(conv_op.get_attr("dilations")) != [1, 1, 1, 1]:
        return None
    block = [int(b) for b in block]
    before = [int(v) for v in np.asarray(paddings)[:, 0] - np.asarray(crops)[:, 0]]
    end = [int(v) for v in np.asarray(paddings)[:, 1] - np.asarray(crops)[:, 1]]
    if inserted is not None:
        block, before, end = [1, *block], [0, *before], [0, *end]
    if len(block) != 2 or min(before + end) < 0:
        return None
    explicit = [0, 0] + [v for pair in zip(before, end) for v in pair] + [0, 0]
    attrs = {"padding": "EXPLICIT", "explicit_paddings": explicit, "dilations": [1, *block, 1]}
    return conv_op, attrs, b2s, between


def inside(conv: Any, op: tf.Operation) -> bool:
    """Whether ``op`` (a SpaceToBatchND or BatchToSpaceND) is part of a dilated-convolution chain."""
    if op.type == "SpaceToBatchND":
        return chain(conv, op) is not None
    op_ = op
    for _ in range(4):  # back through [Squeeze], the conv, [ExpandDims] to the SpaceToBatchND
        op_ = op_.inputs[0].op if op_.inputs else None
        if op_ is None:
            return False
        if op_.type == "SpaceToBatchND":
            hit = chain(conv, op_)
            return hit is not None and hit[2] is op
    return False
