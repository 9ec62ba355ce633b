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
    """ONNX RNN/GRU/LSTM on torch's fused recurrent kernels, returning ONNX's outputs: Y [T, D, B, H],
    Y_h, Y_c.

    The weights stay the graph's own tensors in ONNX's layout (``W`` [D, gates*H, I], ``R``
    [D, gates*H, H], ``B`` [D, 2*gates*H]) under their ONNX names, so ``state_dict`` and
    ``initializer_keys`` keep every initializer name and value; each call reorders the gate blocks
    into torch's layout (differentiable, so training updates the ONNX-layout Parameters).
    ``batch_first`` is ONNX ``layout=1`` (Y then is [B, T, D, H], Y_h/Y_c [B, D, H]).
    """

    def __init__(self, kind: str, w: torch.Tensor, r: torch.Tensor, b: torch.Tensor | None, *,
                 order: list[int], batch_first: bool, has_h: bool, has_c: bool, num_outputs: int,
                 tuple_out: bool):
        super().__init__()
        bind(self, "W", w)
        bind(self, "R", r)
        bind(self, "B", b)
        self.kind = kind  # "LSTM", "GRU", "RNN_tanh"
        self.num_dir, self.hidden = int(w.shape[0]), int(r.shape[-1])
        hidden = self.hidden
        rows = [blk * hidden + i for blk in order for i in range(hidden)]
        # gate rows in torch's order; None when ONNX's order is torch's (RNN: one gate)
        self.rows = None if rows == list(range(len(rows))) else rows
        self.batch_first = batch_first
        self.has_h, self.has_c = has_h, has_c
        self.num_outputs = num_outputs
        self.tuple_out = tuple_out

    def _flat_weights(self) -> list[torch.Tensor]:
        """torch's per-direction [w_ih, w_hh, b_ih, b_hh] from the ONNX-layout tensors."""
        rows = None
        if self.rows is not None:
            rows = torch.tensor(self.rows, dtype=torch.int64, device=self.W.device)
        half = self.R.shape[1]
        flat = []
        for d in range(self.num_dir):
            parts = [self.W[d], self.R[d]]
            if self.B is not None:
                parts += [self.B[d][:half], self.B[d][half:]]
            flat += [p if rows is None else p.index_select(0, rows) for p in parts]
        return flat

    def forward(self, x: torch.Tensor, *states: torch.Tensor):
        num_dir, hidden = self.num_dir, self.hidden
        it = iter(states)
        h0 = next(it) if self.has_h else None
        c0 = next(it) if self.has_c else None
        if self.batch_first:  # ONNX layout=1 states are [B, D, H]; torch's are [D, B, H]
            h0 = h0.transpose(0, 1).contiguous() if h0 is not None else None
            c0 = c0.transpose(0, 1).contiguous() if c0 is not None else None
        y, h, c = self._functional(x, h0, c0, num_dir, hidden)
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
        """torch's recurrent kernel on the reordered weights; initial states the graph does not give
        are zeros on the input's device and dtype."""
        batch = x.shape[0] if self.batch_first else x.shape[1]
        zeros = x.new_zeros((num_dir, batch, hidden))
        h0 = zeros if h0 is None else h0
        args = (self._flat_weights(), self.B is not None, 1, 0.0, self.training, num_dir == 2, self.batch_first)
        if self.kind == "LSTM":
            y, h, c = torch.lstm(x, (h0, zeros if c0 is None else c0), *args)
            return y, h, c
        kernel = {"GRU": torch.gru, "RNN_tanh": torch.rnn_tanh}.get(self.kind, torch.rnn_relu)
        y, h = kernel(x, h0, *args)
        return y, h, None
