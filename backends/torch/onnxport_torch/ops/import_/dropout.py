"""Dropout: ``nn.Dropout`` (train/eval follow the module) unless the mask is used.

A ``training_mode`` fed at run time is obeyed; one fixed in the file (an exporter's constant
True/False) is the mode the model was exported in, so ``model.train()``/``model.eval()`` decide."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from onnxport import importer


@importer("Dropout", since=22)
def dropout(ctx, x, ratio=None, training_mode=None, *, seed):
    p = float(ratio) if ratio is not None else 0.5
    runtime_mode = training_mode is not None and ctx.const(2) is None
    train = bool(training_mode) if runtime_mode else ctx.training
    if not train or p == 0.0:
        y, mask = x, torch.ones_like(x, dtype=torch.bool)
    else:
        if seed is not None:
            # a seeded mask is reproducible: MT19937 uniform doubles, the stream ONNX's reference draws
            draws = np.random.RandomState(int(seed)).uniform(0.0, 1.0, tuple(x.shape))
            keep = torch.from_numpy(draws >= p).to(x.device)
        else:
            keep = torch.rand(x.shape, device=x.device) >= p
        mask = keep
        y = torch.where(keep, x / (1.0 - p), torch.zeros_like(x)) if p < 1.0 else torch.zeros_like(x)
    return y if ctx.num_outputs == 1 else (y, mask)


@dropout.module_builder
def dropout_module(ctx, *, seed):
    if ctx.num_outputs > 1 and ctx.output_used(1):
        return None
    if ctx.num_inputs > 2 and ctx.weight_name(2) and ctx.const(2) is None:
        return None  # the mode is a runtime input: the functional form obeys it
    p = 0.5
    if ctx.num_inputs > 1 and ctx.weight_name(1):
        r = ctx.const(1)
        if r is None:
            return None
        p = float(r)
    return nn.Dropout(p), [0]
