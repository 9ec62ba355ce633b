"""Helpers for module builders: put the model's shared weights into native layers."""

from __future__ import annotations

import torch
from torch import nn


def bind(module: nn.Module, name: str, tensor: torch.Tensor | None) -> None:
    """Make ``module.<name>`` the model's own tensor (a Parameter stays one; others are buffers)."""
    if name in module._parameters:
        del module._parameters[name]
    if name in module._buffers:
        del module._buffers[name]
    if tensor is None:
        module.register_parameter(name, None)
    elif isinstance(tensor, nn.Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


class OnnxRecurrent(nn.Module):
    """An ``nn.RNN/GRU/LSTM`` (``.rnn``) returning ONNX's outputs: Y [T, D, B, H], Y_h, Y_c.

    ``batch_first`` is ONNX ``layout=1`` (Y then is [B, T, D, H], Y_h/Y_c [B, D, H]).
    """

    def __init__(self, rnn: nn.RNNBase, *, batch_first: bool, has_h: bool, has_c: bool, num_outputs: int,
                 tuple_out: bool):
        super().__init__()
        self.rnn = rnn
        self.batch_first = batch_first
        self.has_h, self.has_c = has_h, has_c
        self.num_outputs = num_outputs
        self.tuple_out = tuple_out

    def forward(self, x: torch.Tensor, *states: torch.Tensor):
        num_dir = 2 if self.rnn.bidirectional else 1
        hidden = self.rnn.hidden_size
        it = iter(states)
        h0 = next(it) if self.has_h else None
        c0 = next(it) if self.has_c else None
        if self.batch_first:  # ONNX layout=1 states are [B, D, H]; torch's are [D, B, H]
            h0 = h0.transpose(0, 1).contiguous() if h0 is not None else None
            c0 = c0.transpose(0, 1).contiguous() if c0 is not None else None
        if isinstance(self.rnn, nn.LSTM):
            if h0 is None and c0 is not None:
                h0 = torch.zeros_like(c0)
            if c0 is None and h0 is not None:
                c0 = torch.zeros_like(h0)
            y, (h, c) = self.rnn(x, (h0, c0) if h0 is not None else None)
        else:
            y, h = self.rnn(x, h0)
            c = None
        # torch concatenates directions on the last axis; ONNX keeps a direction axis
        if self.batch_first:
            y = y.reshape(y.shape[0], y.shape[1], num_dir, hidden)
            h = h.transpose(0, 1)
            c = c.transpose(0, 1) if c is not None else None
        else:
            y = y.reshape(y.shape[0], y.shape[1], num_dir, hidden).transpose(1, 2)
        if not self.tuple_out:
            return y
        return (y, h, c)[: self.num_outputs]
