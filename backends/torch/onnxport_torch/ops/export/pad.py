"""constant_pad_nd, pad (constant, reflect, replicate, circular) -> Pad (negative pads crop)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 5, 6)


def _onnx_pads(g, x, pad):
    """torch lists (begin, end) pairs from the last dim back; ONNX all begins, then all ends."""
    rank = g.rank(x)
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise g.error(f"pad {list(pad)} does not fit a rank-{rank} input")
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = pad[2 * i]
        ends[rank - 1 - i] = pad[2 * i + 1]
    return begins, ends


def _pads_value(g, pads):
    if all(isinstance(p, int) for p in pads):
        return g.const(np.asarray(pads, dtype=np.int64))
    return g.ints(pads)


def _constant(g, x, pad, value):
    begins, ends = _onnx_pads(g, x, pad)
    return g.op("Pad", x, _pads_value(g, begins + ends), g.scalar(value, x.dtype), mode="constant")


@exporter(
    "aten.constant_pad_nd.default",
    samples=[Sample(lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), (torch.randn(2, 3, 4),), emits=("Pad",)),
             Sample(lambda x: F.pad(x, (-1, 2)), (torch.randn(2, 5),), emits=("Pad",), name="crop")],
)
def constant_pad_nd(g, x, pad, value=0):
    return _constant(g, x, pad, value)


def _crop(g, x, begins, ends):
    """Negative pads as a Slice first (torch crops, then pads what is left); the pads left."""
    axes = [i for i, (b, e) in enumerate(zip(begins, ends)) if b < 0 or e < 0]
    if not axes:
        return x, begins, ends
    starts = [max(-begins[a], 0) for a in axes]
    stops = [-max(-ends[a], 0) or np.iinfo(np.int64).max for a in axes]
    x = g.op("Slice", x, g.const(np.asarray(starts, dtype=np.int64)), g.const(np.asarray(stops, dtype=np.int64)),
             g.const(np.asarray(axes, dtype=np.int64)))
    return x, [max(b, 0) for b in begins], [max(e, 0) for e in ends]


def _circular(g, x, begins, ends):
    """Pad mode wrap (opset 19), or a Concat of each padded dim's wrapped-around ends."""
    if g.opset >= 19:
        return g.op("Pad", x, _pads_value(g, begins + ends), mode="wrap")

    def part(v, start, stop, axis):
        return g.op("Slice", v, g.const(np.asarray([start], dtype=np.int64)),
                    g.const(np.asarray([stop], dtype=np.int64)), g.const(np.asarray([axis], dtype=np.int64)))

    for axis, (b, e) in enumerate(zip(begins, ends)):
        if b or e:
            parts = ([part(x, -b, np.iinfo(np.int64).max, axis)] if b else []) + [x] + ([part(x, 0, e, axis)] if e else [])
            x = g.op("Concat", *parts, axis=axis)
    return x


@exporter(
    "aten.pad.default",
    samples=[Sample(lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), (torch.randn(2, 3, 4),), emits=("Pad",), name="constant"),
             Sample(nn.ZeroPad2d((1, -1, 2, 0)), (_X,), emits=("Pad",), name="zero_crop"),
             Sample(nn.ReflectionPad2d((1, 2, 3, 0)), (_X,), emits=("Pad",), name="reflect"),
             Sample(nn.ReplicationPad3d(1), (torch.randn(1, 2, 3, 4, 3),), emits=("Pad",), name="replicate"),
             Sample(nn.ReflectionPad1d((2, -1)), (torch.randn(2, 3, 6),), emits=("Slice", "Pad"), name="reflect_crop"),
             Sample(nn.CircularPad2d((1, 2, 3, 0)), (_X,), emits=("Concat",), name="circular"),
             Sample(nn.CircularPad1d((2, -3)), (torch.randn(2, 3, 6),), emits=("Slice", "Concat"), name="circular_crop"),
             Sample(nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), (_X,), emits=("Pad", "Conv"), name="conv_reflect")],
)
def pad(g, x, pad, mode="constant", value=None):
    """Pad modes constant, reflect, edge (replicate) and wrap (circular: Slice and Concat before
    opset 19). Negative pads crop; before a non-constant pad the crop is a Slice of its own,
    since torch crops first and pads from what is left."""
    if mode == "constant":
        return _constant(g, x, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise g.error(f"pad mode {mode!r} takes no fill value (got {value})")
    onnx_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode)
    if onnx_mode is None:
        raise g.error(f"pad mode {mode!r} is not supported")
    begins, ends = _onnx_pads(g, x, pad)
    if not all(isinstance(p, int) for p in pad):
        if onnx_mode == "wrap":
            raise g.error("circular padding by symbolic amounts is not supported")
        return g.op("Pad", x, g.ints(begins + ends), mode=onnx_mode)
    x, begins, ends = _crop(g, x, begins, ends)
    if onnx_mode == "wrap":
        return _circular(g, x, begins, ends)
    return g.op("Pad", x, _pads_value(g, begins + ends), mode=onnx_mode)
