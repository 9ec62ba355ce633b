"""Element-wise activations."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from onnxport import importer


@importer("Relu", since=14)
def relu(ctx, x):
    return torch.relu(x)


@importer("Softmax", since=13)
@importer("LogSoftmax", since=13)
def softmax(ctx, x, *, axis):
    fn = F.softmax if ctx.op_type == "Softmax" else F.log_softmax
    return fn(x, dim=axis)
