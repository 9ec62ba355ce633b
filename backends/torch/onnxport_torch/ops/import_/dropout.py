"""Dropout: ``nn.Dropout`` (train/eval follow the module) unless training_mode is an input."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from onnxport import importer


@importer("Dropout", since=22)
def dropout(ctx, x, ratio=None, training_mode=None, *, seed):
    p = float(ratio) if ratio is not None else 0.5
    train = bool(training_mode) if training_mode is not None else False
    if not train or p == 0.0:
        y = x
        mask = torch.ones_like(x, dtype=torch.bool)
    else:
        mask = torch.rand_like(x, dtype=torch.float32) >= p
        y = x * mask / (1.0 - p)
    return y if ctx.num_outputs == 1 else (y, mask)


@dropout.module_builder
def dropout_module(ctx, *, seed):
    if ctx.num_outputs > 1 and ctx.output_used(1):
        return None
    if ctx.num_inputs > 2 and ctx.weight_name(2):
        return None
    p = 0.5
    if ctx.num_inputs > 1 and ctx.weight_name(1):
        r = ctx.const(1)
        if r is None:
            return None
        p = float(r)
    return nn.Dropout(p), [0]


_ = F
