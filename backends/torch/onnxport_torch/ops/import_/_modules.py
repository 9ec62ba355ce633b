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
        # what the compiled path reads, held apart from the layer (torch.compile refuses to trace RNN
        # modules); the Parameters are the layer's own objects, which .to()/.half() convert in place
        self.num_dir = 2 if rnn.bidirectional else 1
        self.hidden = rnn.hidden_size
        self.kind = type(rnn).__name__ if not isinstance(rnn, nn.RNN) else f"RNN_{rnn.nonlinearity}"
        self.config = (rnn.bias, rnn.num_layers, rnn.dropout)
        self.__dict__["_flat"] = list(rnn._flat_weights)

    def _apply(self, fn, recurse=True):
        out = super()._apply(fn, recurse)
        self.__dict__["_flat"] = list(self.rnn._flat_weights)  # a conversion may replace Parameters
        return out

    def forward(self, x: torch.Tensor, *states: torch.Tensor):
        num_dir, hidden = self.num_dir, self.hidden
        it = iter(states)
        h0 = next(it) if self.has_h else None
        c0 = next(it) if self.has_c else None
        if self.batch_first:  # ONNX layout=1 states are [B, D, H]; torch's are [D, B, H]
            h0 = h0.transpose(0, 1).contiguous() if h0 is not None else None
            c0 = c0.transpose(0, 1).contiguous() if c0 is not None else None
        if torch.compiler.is_compiling():
            y, h, c = self._functional(x, h0, c0, num_dir, hidden)
        elif isinstance((r := self.rnn), nn.LSTM):
            if h0 is None and c0 is not None:
                h0 = torch.zeros_like(c0)
            if c0 is None and h0 is not None:
                c0 = torch.zeros_like(h0)
            y, (h, c) = r(x, (h0, c0) if h0 is not None else None)
        else:
            y, h = r(x, h0)
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

    def _functional(self, x: torch.Tensor, h0: torch.Tensor | None, c0: torch.Tensor | None, num_dir: int,
                    hidden: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The layer's kernel called directly on its Parameters (torch.compile does not trace RNN
        modules); initial states the graph does not give are zeros on the input's device and dtype."""
        bias, layers, dropout = self.config
        batch = x.shape[0] if self.batch_first else x.shape[1]
        zeros = x.new_zeros((layers * num_dir, batch, hidden))
        h0 = zeros if h0 is None else h0
        args = (self._flat, bias, layers, dropout, self.training, num_dir == 2, self.batch_first)
        if self.kind == "LSTM":
            y, h, c = torch.lstm(x, (h0, zeros if c0 is None else c0), *args)
            return y, h, c
        kernel = {"GRU": torch.gru, "RNN_tanh": torch.rnn_tanh}.get(self.kind, torch.rnn_relu)
        y, h = kernel(x, h0, *args)
        return y, h, None
