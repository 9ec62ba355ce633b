"""Dropout: dropout, feature_dropout, alpha_dropout, feature_alpha_dropout (-> nothing in
evaluation, Dropout in training)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from onnxport import Sample, exporter

_X = (torch.randn(2, 3, 4),)


@exporter(
    "aten.dropout.default",
    samples=[Sample(nn.Sequential(nn.Dropout(0.3), nn.ReLU()), _X, emits=("Relu",), name="eval"),
             Sample(lambda x: F.dropout(x, 0.0, training=True), _X, emits=("Dropout",), name="train")],
)
def dropout(g, x, p, train):
    """The input itself in evaluation; in training ONNX Dropout (training_mode on: it draws
    its own mask, so the values cannot match torch's except at p=0), zeros at p=1 as torch gives."""
    if not train:
        return x
    if p == 1:
        return g.op("Mul", x, g.scalar(0, x.dtype))
    ratio = g.const(np.asarray(p, dtype=np.float32))
    return g.op("Dropout", x, ratio, g.const(np.asarray(True)))


def _identity_in_eval(kind):
    def prim(g, x, p, train):
        if train and p != 0:
            raise g.error(f"{kind} in training mode is not supported: ONNX has no such op "
                          "(call .eval() on the module, or export with p=0)")
        return x

    name = kind.replace(" ", "_")
    prim.__name__ = prim.__qualname__ = name
    prim.__doc__ = f"The input itself in evaluation (or at p=0); {kind} in training mode is an error."
    prim.__module__ = __name__
    return prim


feature_dropout = exporter(
    "aten.feature_dropout.default",
    samples=[Sample(nn.Sequential(nn.Dropout2d(0.5), nn.ReLU()), (torch.randn(2, 3, 4, 4),), emits=("Relu",), name="eval"),
             Sample(lambda x: F.dropout1d(x, 0.0, training=True) + 1, _X, emits=("Add",), name="train_p0")],
)(_identity_in_eval("feature dropout"))

alpha_dropout = exporter(
    "aten.alpha_dropout.default",
    samples=[Sample(nn.Sequential(nn.AlphaDropout(0.5), nn.ReLU()), _X, emits=("Relu",), name="eval")],
)(_identity_in_eval("alpha dropout"))

feature_alpha_dropout = exporter(
    "aten.feature_alpha_dropout.default",
    samples=[Sample(nn.Sequential(nn.FeatureAlphaDropout(0.5), nn.ReLU()), (torch.randn(2, 3, 4, 4),), emits=("Relu",),
                    name="eval")],
)(_identity_in_eval("feature alpha dropout"))
