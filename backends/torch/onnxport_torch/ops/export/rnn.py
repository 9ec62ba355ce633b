"""Recurrent layers: lstm, gru, rnn_tanh, rnn_relu (-> LSTM, GRU, RNN; one node per layer).

``torch.export``'s training IR keeps ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` whole as
``aten.lstm.input`` and friends. Each layer becomes one ONNX recurrent node (both directions in
it when bidirectional); a layer's output ``Y`` [seq, dirs, batch, hidden] is reshaped to
[seq, batch, dirs*hidden] for the next layer, and the layers' final states are concatenated.

Weights stay the ``state_dict`` initializers: the gate blocks are reordered into ONNX's order by
one ``Gather`` on the (direction-concatenated) weight, which runtimes fold at load time.
ONNX's ``layout=1`` is not used (onnxruntime rejects it): ``batch_first`` is two Transposes.
A zero initial state (what the modules create without ``hx``) is left out: it is ONNX's default.
``proj_size`` (LSTM projections): the node runs with ``R = W_hh @ W_hr`` on the unprojected
state, then ``Y`` and ``Y_h`` are projected by a MatMul; exact from a zero ``h0`` only, so a
non-zero ``h0`` is an error. Dropout between layers in training mode is an error (random).
The packed-sequence overloads (``aten.lstm.data`` ...) have no primitive (and
``pack_padded_sequence`` does not trace with ``torch.export``: its lengths size tensors).
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch
from torch import nn

from onnxport import Sample, exporter

#: the torch gate blocks in ONNX order: LSTM ifgo -> iofc, GRU rzn -> zrh
_ONNX_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}


def _is_zeros(v: ir.Value | None) -> bool:
    """``v`` is a Constant or ConstantOfShape of zeros, maybe cast (a default ``hx``): the ONNX
    ops' default initial state."""
    node = v.producer() if v is not None else None
    if node is None or node.domain not in ("", "ai.onnx"):
        return False
    if node.op_type == "Cast":
        return _is_zeros(node.inputs[0])
    if node.op_type == "Constant":
        return v.const_value is not None and not np.any(v.const_value.numpy())
    if node.op_type == "ConstantOfShape":
        attr = node.attributes.get("value")
        return attr is None or not np.any(attr.value.numpy())
    return False


def _gate_rows(op: str, hidden: int) -> np.ndarray:
    """Row indices of a torch [gates*hidden, ...] weight in ONNX's gate order."""
    return np.concatenate([np.arange(b * hidden, (b + 1) * hidden) for b in _ONNX_ORDER[op]])


def _stacked(g, op: str, hidden: int, blocks: list[list[ir.Value]]) -> ir.Value:
    """One [dirs, rows, ...] ONNX weight from each direction's torch tensors (gate-major rows):
    Concat of everything along dim 0, then a Gather picking each direction's rows in ONNX order.
    A direction with several tensors (the 1-D biases ``b_ih``, ``b_hh``) keeps them in turn."""
    rows = _gate_rows(op, hidden)
    size = len(rows)
    flat = [t for ts in blocks for t in ts]
    cat = flat[0] if len(flat) == 1 else g.op("Concat", *flat, axis=0)
    per_dir = len(blocks[0])
    idx = np.stack([
        np.concatenate([rows + (d * per_dir + k) * size for k in range(per_dir)]) for d in range(len(blocks))
    ]).astype(np.int64)
    if np.array_equal(idx.ravel(), np.arange(idx.size)):  # RNN: no reordering
        return g.op("Reshape", cat, g.ints([len(blocks), idx.shape[1]] + ([] if per_dir > 1 else [-1])))
    return g.op("Gather", cat, g.const(idx), axis=0)


def _layer_state(g, state: ir.Value | None, layer: int, dirs: int, num_layers: int) -> ir.Value | None:
    """Rows [layer*dirs, (layer+1)*dirs) of a [num_layers*dirs, batch, hidden] state."""
    if state is None or num_layers == 1:
        return state
    i64 = np.int64
    return g.op("Slice", state, g.const(np.asarray([layer * dirs], i64)),
                g.const(np.asarray([(layer + 1) * dirs], i64)), g.const(np.asarray([0], i64)))


def _recurrent(g, op: str, x, states, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first, activation=None):
    """Shared body: ``states`` is [h0] or [h0, c0]; returns (output, h_n[, c_n])."""
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    proj = op == "LSTM" and len(params) == num_layers * dirs * (per + 1)
    per += proj
    if len(params) != num_layers * dirs * per:
        raise g.error(f"expected {num_layers * dirs * per} weights for {num_layers} layer(s), "
                      f"{dirs} direction(s), has_biases={has_biases}; got {len(params)}")
    if train and dropout > 0 and num_layers > 1:
        raise g.error(f"dropout={dropout} between layers in training mode is not supported (random); "
                      "call module.eval() before export")
    if g.rank(x) != 3:
        raise g.error(f"expected a 3-D input, got rank {g.rank(x)}")
    if x.dtype == ir.DataType.BFLOAT16 and g.opset < 22:
        raise g.error(f"bfloat16 {op} needs opset 22 (exporting opset {g.opset})")
    hidden = params[0].shape[0] // len(_ONNX_ORDER[op])
    features = dirs * (params[per - 1].shape[0] if proj else hidden)  # of each layer's output
    states = [None if _is_zeros(s) else s for s in states]
    if proj and states[0] is not None:
        # ONNX LSTM recurs on the unprojected h: R @ W_hr stands in for R, which needs h0 = 0
        raise g.error("nn.LSTM with proj_size > 0 and a non-zero initial h0 is not supported: ONNX "
                      "LSTM has no hidden-state projection (export with decompose=True to unroll it)")
    attrs = {"hidden_size": int(hidden), "direction": "bidirectional" if bidirectional else None}
    if op == "GRU":
        attrs["linear_before_reset"] = 1  # torch applies the reset gate to (W_hn h + b_hn)
    if activation is not None:
        attrs["activations"] = [activation] * dirs
    outs = 3 if op == "LSTM" else 2
    finals: list[list[ir.Value]] = [[] for _ in range(outs - 1)]
    seq = g.op("Transpose", x, perm=[1, 0, 2]) if batch_first else x
    for layer in range(num_layers):
        ws = [params[(layer * dirs + d) * per:(layer * dirs + d + 1) * per] for d in range(dirs)]
        w = _stacked(g, op, hidden, [[p[0]] for p in ws])
        r = _stacked(g, op, hidden, [[g.op("MatMul", p[1], p[-1]) if proj else p[1]] for p in ws])
        b = _stacked(g, op, hidden, [[p[2], p[3]] for p in ws]) if has_biases else None
        init = [_layer_state(g, s, layer, dirs, num_layers) for s in states]
        y, *last = g.op(op, seq, w, r, b, None, *init, outputs=outs, **attrs)
        if proj:  # project Y [seq, dirs, batch, hidden] and Y_h [dirs, batch, hidden] to proj_size
            w_hr = [p[-1] for p in ws]
            if dirs == 1:
                w_hr = g.op("Transpose", w_hr[0], perm=[1, 0])
            else:
                w_hr = g.op("Reshape", g.op("Concat", *w_hr, axis=0), g.ints([dirs, -1, int(hidden)]))
                w_hr = g.op("Transpose", w_hr, perm=[0, 2, 1])
            y, last[0] = g.op("MatMul", y, w_hr), g.op("MatMul", last[0], w_hr)
        for acc, v in zip(finals, last):
            acc.append(v)
        # Y [seq, dirs, batch, hidden] -> [seq, batch, dirs*hidden] ([batch, seq, ...] at the end)
        if dirs == 1:
            seq = g.op("Squeeze", y, g.const(np.asarray([1], dtype=np.int64)))
        else:
            out_bf = batch_first and layer == num_layers - 1
            y = g.op("Transpose", y, perm=[2, 0, 1, 3] if out_bf else [0, 2, 1, 3])
            seq = g.op("Reshape", y, g.ints([0, 0, int(features)]))
    out = g.op("Transpose", seq, perm=[1, 0, 2]) if batch_first and dirs == 1 else seq
    return (out, *(acc[0] if len(acc) == 1 else g.op("Concat", *acc, axis=0) for acc in finals))


class _WithState(nn.Module):
    """A recurrent layer called with an explicit initial state; ``batch_major`` takes the state
    as [batch, layers*dirs, hidden] (so a batch-first sample's dim 0 can stay symbolic)."""

    def __init__(self, rnn: nn.Module, batch_major: bool = False):
        super().__init__()
        self.rnn, self.batch_major = rnn, batch_major

    def forward(self, x, h0, c0=None):
        if self.batch_major:
            h0 = h0.permute(1, 0, 2)
            c0 = c0.permute(1, 0, 2) if c0 is not None else None
        return self.rnn(x, h0 if c0 is None else (h0, c0))


def _state(batch: int, rows: int, hidden: int = 16, n: int = 1) -> tuple[torch.Tensor, ...]:
    """``n`` initial states, batch-major ([batch, layers*dirs, hidden], see :class:`_WithState`)."""
    return tuple(torch.randn(batch, rows, hidden) for _ in range(n))


@exporter(
    "aten.lstm.input",
    samples=[
        Sample(nn.LSTM(8, 16), (torch.randn(5, 3, 8),), emits=("LSTM",)),
        Sample(nn.LSTM(8, 16, num_layers=2, batch_first=True), (torch.randn(3, 5, 8),),
               emits=("LSTM", "Transpose"), name="two_layers_batch_first"),
        Sample(nn.LSTM(8, 16, bidirectional=True), (torch.randn(5, 2, 8),), emits=("LSTM",), name="bidirectional"),
        Sample(nn.LSTM(8, 16, bias=False), (torch.randn(5, 2, 8),), emits=("LSTM",), name="no_bias"),
        Sample(_WithState(nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True), batch_major=True),
               (torch.randn(3, 5, 8), *_state(3, 4, n=2)), emits=("LSTM", "Slice"), name="state"),
        Sample(nn.LSTM(8, 16, num_layers=2, bidirectional=True, proj_size=4), (torch.randn(5, 3, 8),),
               emits=("LSTM", "MatMul"), name="proj_size"),
    ],
)
def lstm(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """Returns (output, h_n, c_n); ``hx`` is [h0, c0]."""
    return _recurrent(g, "LSTM", x, list(hx), params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first)


@exporter(
    "aten.gru.input",
    samples=[
        Sample(nn.GRU(8, 16), (torch.randn(5, 3, 8),), emits=("GRU",)),
        Sample(nn.GRU(8, 16, num_layers=2, bidirectional=True, batch_first=True), (torch.randn(3, 5, 8),),
               emits=("GRU",), name="two_layers_bidirectional"),
        Sample(_WithState(nn.GRU(8, 16, num_layers=2, batch_first=True), batch_major=True),
               (torch.randn(3, 5, 8), *_state(3, 2)), emits=("GRU", "Slice"), name="state"),
    ],
)
def gru(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """Returns (output, h_n); ONNX GRU with ``linear_before_reset=1``."""
    return _recurrent(g, "GRU", x, [hx], params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first)


@exporter(
    "aten.rnn_tanh.input",
    samples=[Sample(nn.RNN(8, 16, num_layers=2), (torch.randn(5, 3, 8),), emits=("RNN",)),
             Sample(_WithState(nn.RNN(8, 16, bidirectional=True, batch_first=True), batch_major=True),
                    (torch.randn(3, 5, 8), *_state(3, 2)), emits=("RNN",), name="state")],
)
def rnn_tanh(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _recurrent(g, "RNN", x, [hx], params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first)


@exporter(
    "aten.rnn_relu.input",
    samples=[Sample(nn.RNN(8, 16, nonlinearity="relu", bidirectional=True, bias=False), (torch.randn(5, 3, 8),),
                    emits=("RNN",))],
)
def rnn_relu(g, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _recurrent(g, "RNN", x, [hx], params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first, activation="Relu")
