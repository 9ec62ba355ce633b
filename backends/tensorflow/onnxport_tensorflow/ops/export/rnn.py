"""Keras LSTM, GRU, SimpleRNN and Bidirectional layers -> one ONNX LSTM / GRU / RNN node per layer.

Keras traces a recurrent layer as a While loop over TensorLists; the exporter records the layer
call instead and this primitive emits one node from the layer's weights, stored in ONNX's layout
under their Keras paths (``lstm/lstm_cell/kernel`` as W [1, 4*units, input] with the gates
reordered: Keras LSTM i f c o -> ONNX i o f c; GRU z r h is the same in both; SimpleRNN has one
gate, its bias is ONNX's input bias with a zero recurrent bias). A Bidirectional
layer is one node with ``direction="bidirectional"``: each direction's weights stay their own
initializer and one Concat joins them. GRU's ``reset_after`` (the Keras default) is ONNX's
``linear_before_reset=1``. Not exported: masks, initial states, stateful layers, and
``go_backwards`` layers that return sequences (their time order differs from ONNX's).
"""

from __future__ import annotations

import keras
import numpy as np

from onnxport import Sample, module_exporter

from ._samples import rand

_ACT = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}
_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [0, 1, 2], "RNN": [0]}
#: Keras layer class name -> ONNX op
_OP = {"LSTM": "LSTM", "GRU": "GRU", "SimpleRNN": "RNN"}


def _act(g, fn) -> str:
    name = getattr(fn, "__name__", str(fn))
    if name not in _ACT:
        raise g.error(f"recurrent activation {name!r} has no ONNX recurrent counterpart (sigmoid, tanh, relu)")
    return _ACT[name]


def _gates(arr: np.ndarray, op: str, units: int) -> np.ndarray:
    """[..., gates*units] columns in ONNX gate order, as [1, gates*units, ...] rows."""
    blocks = [arr[..., b * units:(b + 1) * units] for b in _ORDER[op]]
    cat = np.concatenate(blocks, axis=-1)
    return cat.T[None] if cat.ndim == 2 else cat[None]


def _direction(g, layer, op: str):
    """(W, R, B or None, activations) of one Keras LSTM/GRU layer, in ONNX layout."""
    cell = layer.cell
    units = int(cell.units)
    conv = g.converter

    def weight(var, tag, np_fn):
        v = conv.variable_value(g, conv.variable_of(var))
        return g.weight(v, tag, np_fn, lambda _: (_ for _ in ()).throw(g.error(f"{var.path} is not a variable")))

    w = weight(cell.kernel, f"onnx_{op}_W", lambda a: _gates(a, op, units))
    r = weight(cell.recurrent_kernel, f"onnx_{op}_R", lambda a: _gates(a, op, units))
    b = None
    if cell.use_bias:
        if op == "GRU" and getattr(cell, "reset_after", False):
            b = weight(cell.bias, "onnx_GRU_B", lambda a: np.concatenate([a[0], a[1]])[None])
        else:
            b = weight(cell.bias, f"onnx_{op}_B", lambda a: np.concatenate(
                [_gates(a, op, units).reshape(-1), np.zeros(len(_ORDER[op]) * units, a.dtype)])[None])
    if op == "RNN":
        return w, r, b, [_act(g, cell.activation)]
    acts = [_act(g, cell.recurrent_activation)] + [_act(g, cell.activation)] * (2 if op == "LSTM" else 1)
    return w, r, b, acts


def _check(g, layer, call_kwargs) -> None:
    if call_kwargs.get("mask") is not None or call_kwargs.get("initial_state") is not None:
        raise g.error(f"{type(layer).__name__} {layer.name!r} called with a mask or an initial state is not exported")
    if getattr(layer, "stateful", False):
        raise g.error(f"stateful {type(layer).__name__} {layer.name!r} is not exported")


def _recurrent(g, x, layers, op: str, return_sequences: bool, merge: str | None = None):
    dirs = len(layers)
    parts = [_direction(g, layer, op) for layer in layers]
    units = int(layers[0].cell.units)
    if dirs == 1:
        w, r, b, acts = parts[0]
    else:
        w, r = (g.op("Concat", *[p[i] for p in parts], axis=0) for i in (0, 1))
        bs = [p[2] for p in parts]
        b = g.op("Concat", *bs, axis=0) if all(v is not None for v in bs) else None
        acts = parts[0][3] + parts[1][3]
    attrs = {"hidden_size": units, "activations": acts}
    if dirs == 2:
        attrs["direction"] = "bidirectional"
    elif layers[0].go_backwards:
        if return_sequences:
            raise g.error(f"go_backwards {op} {layers[0].name!r} returning sequences is not exported")
        attrs["direction"] = "reverse"
    if op == "GRU":
        cell = layers[0].cell
        attrs["linear_before_reset"] = 1 if getattr(cell, "reset_after", False) else 0
    seq = g.op("Transpose", x, perm=[1, 0, 2])
    outs = 3 if op == "LSTM" else 2
    y, *last = g.op(op, seq, w, r, b, outputs=outs, **attrs)
    zero = g.ints([0])
    if return_sequences:
        if dirs == 1:
            out = g.op("Transpose", g.op("Squeeze", y, g.ints([1])), perm=[1, 0, 2])
        else:
            t = g.op("Transpose", y, perm=[2, 0, 1, 3])
            out = _merge(g, t, merge, axis=2, units=units, rank=4)
    elif dirs == 1:
        out = g.op("Squeeze", last[0], zero)
    else:
        t = g.op("Transpose", last[0], perm=[1, 0, 2])
        out = _merge(g, t, merge, axis=1, units=units, rank=3)
    states = [g.op("Squeeze", s, zero) for s in last] if dirs == 1 else []
    return out, states


def _merge(g, t, mode, axis, units, rank):
    """Join the two directions on ``axis`` of ``t`` as Keras' merge_mode does."""
    if mode == "concat":
        shape = [0] * axis + [2 * units]
        return g.op("Reshape", t, g.ints(shape))
    if mode in ("sum", "ave", "mul"):
        if mode == "mul":
            a, b = g.op("Split", t, g.ints([1, 1]), axis=axis, outputs=2)
            return g.op("Squeeze", g.op("Mul", a, b), g.ints([axis]))
        s = g.op("ReduceSum" if mode == "sum" else "ReduceMean", t, g.ints([axis]), keepdims=0)
        return s
    raise g.error(f"Bidirectional merge_mode={mode!r} is not exported")


def _single(g, layer, x, op):
    _check(g, layer, g.converter.current_call.kwargs)
    out, states = _recurrent(g, x, [layer], op, bool(layer.return_sequences))
    return (out, *states) if layer.return_state else out


#: the layer primitives' samples (module primitives carry none: tests/tensorflow/test_export_layers.py
#: exports each and compares it with Keras in onnxruntime)
SAMPLES: dict[str, list[Sample]] = {
    "LSTM": [Sample(keras.layers.LSTM(4), (rand(2, 5, 3),), emits=("LSTM",), name="last"),
             Sample(keras.layers.LSTM(3, return_sequences=True, return_state=True), (rand(2, 4, 3),),
                    emits=("LSTM",), name="sequences_state")],
    "GRU": [Sample(keras.layers.GRU(4), (rand(2, 5, 3),), emits=("GRU",), name="reset_after"),
            Sample(keras.layers.GRU(3, reset_after=False, return_sequences=True), (rand(2, 4, 3),), emits=("GRU",),
                   name="reset_before")],
    "SimpleRNN": [Sample(keras.layers.SimpleRNN(4), (rand(2, 5, 3),), emits=("RNN",),
                         name="last"),
                  Sample(keras.layers.SimpleRNN(3, activation="relu", return_sequences=True, return_state=True),
                         (rand(2, 4, 3),), emits=("RNN",), name="relu_sequences_state")],
    "Bidirectional": [
        Sample(keras.layers.Bidirectional(keras.layers.LSTM(3, return_sequences=True)), (rand(2, 4, 3),),
               emits=("LSTM",), name="lstm_concat"),
        Sample(keras.layers.Bidirectional(keras.layers.GRU(3), merge_mode="sum"), (rand(2, 4, 3),),
               emits=("GRU",), name="gru_sum"),
        Sample(keras.layers.Bidirectional(keras.layers.SimpleRNN(3, return_sequences=True)), (rand(2, 4, 3),),
               emits=("RNN",), name="simple_rnn_concat")],
}


@module_exporter(keras.layers.LSTM)
def lstm(g, layer, x, *rest):
    return _single(g, layer, x, "LSTM")


@module_exporter(keras.layers.GRU)
def gru(g, layer, x, *rest):
    return _single(g, layer, x, "GRU")


@module_exporter(keras.layers.SimpleRNN)
def simple_rnn(g, layer, x, *rest):
    return _single(g, layer, x, "RNN")


@module_exporter(keras.layers.Bidirectional)
def bidirectional(g, layer, x, *rest):
    _check(g, layer, g.converter.current_call.kwargs)
    fwd, bwd = layer.forward_layer, layer.backward_layer
    kind = type(fwd).__name__
    if kind not in _OP or type(bwd).__name__ != kind:
        raise g.error(f"Bidirectional over {kind} is not exported (LSTM, GRU and SimpleRNN are)")
    if layer.return_state:
        raise g.error("Bidirectional with return_state is not exported")
    out, _ = _recurrent(g, x, [fwd, bwd], _OP[kind], bool(fwd.return_sequences), layer.merge_mode)
    return out
