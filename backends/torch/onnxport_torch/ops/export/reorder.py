"""Reordering and repetition: flip, roll, repeat, tile (-> Slice with negative steps, Concat, Tile)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

from .shape import shape_of, size1, sizes

_X = torch.randn(2, 3, 4)
_INT64_MAX, _INT64_MIN = 2**63 - 1, -(2**63)


def _i64(values):
    return np.asarray(values, dtype=np.int64)


@exporter(
    "aten.flip.default",
    samples=[Sample(lambda x: x.flip(1), (_X,), emits=("Slice",)),
             Sample(lambda x: x.flip((0, -1)), (_X,), emits=("Slice",), name="dims")],
)
def flip(g, x, dims):
    """Slice from the last element backwards (step -1) on every flipped axis."""
    rank = g.rank(x)
    axes = sorted({g.axis(d, rank) for d in dims})
    if not axes or rank == 0:
        return x
    k = len(axes)
    return g.op("Slice", x, g.const(_i64([-1] * k)), g.const(_i64([_INT64_MIN] * k)), g.const(_i64(axes)),
                g.const(_i64([-1] * k)))


def _roll_axis(g, x, shift, axis):
    """x rolled by ``shift`` along ``axis``: Concat(x[n - s:], x[:n - s]) with s = shift mod n."""
    (n,) = sizes(g, x, [axis])
    if isinstance(n, int) and not isinstance(shift, ir.Value):
        if n == 0 or shift % n == 0:
            return x
        cut = g.const(_i64([n - shift % n]))
    else:
        n = g.ints([n])
        cut = size1(g.op("Sub", n, g.op("Mod", g.ints([shift]), n)))
    axes = g.const(_i64([axis]))
    tail = g.op("Slice", x, cut, g.const(_i64([_INT64_MAX])), axes)
    head = g.op("Slice", x, g.const(_i64([0])), cut, axes)
    return g.op("Concat", tail, head, axis=axis)


@exporter(
    "aten.roll.default",
    samples=[Sample(lambda x: x.roll(1, 1), (_X,), emits=("Concat",)),
             Sample(lambda x: x.roll((-1, 5), (0, 2)), (_X,), emits=("Concat",), name="dims"),
             Sample(lambda x: x.roll(2), (_X,), emits=("Concat", "Reshape"), name="flat")],
)
def roll(g, x, shifts, dims=()):
    """Without dims the flattened tensor is rolled and reshaped back."""
    shifts = [shifts] if isinstance(shifts, (int, ir.Value)) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims:
        if len(shifts) != 1:
            raise g.error("roll without dims takes one shift")
        flat = g.op("Reshape", x, g.const(_i64([-1])))
        static = all(isinstance(d, int) for d in x.shape)
        flat.dtype, flat.shape = x.dtype, ir.Shape([int(np.prod(list(x.shape))) if static else None])
        return g.op("Reshape", _roll_axis(g, flat, shifts[0], 0), shape_of(g, x))
    if len(shifts) != len(dims):
        raise g.error("roll: shifts and dims have different lengths")
    rank = g.rank(x)
    y = x
    for shift, dim in zip(shifts, dims):
        y = _roll_axis(g, _shaped(y, x), shift, g.axis(dim, rank))
    return y if y is not x else g.op("Identity", x)


def _shaped(y, like):
    """Intermediate results keep the (unchanged) shape, for the size lookups."""
    if y.shape is None:
        y.shape = like.shape
    return y


def _tile(g, x, repeats):
    rank = g.rank(x)
    if len(repeats) < rank:
        raise g.error(f"repeat: {len(repeats)} repeats for a rank-{rank} tensor")
    if len(repeats) > rank:  # new leading dims
        x = g.op("Unsqueeze", x, g.const(_i64(list(range(len(repeats) - rank)))))
    if all(isinstance(r, int) and r == 1 for r in repeats):
        return g.op("Identity", x)
    return g.op("Tile", x, g.ints(list(repeats)))


@exporter(
    "aten.repeat.default",
    samples=[Sample(lambda x: x.repeat(1, 2, 3), (_X,), emits=("Tile",)),
             Sample(lambda x: x.repeat(2, 1, 1, 2), (_X,), emits=("Tile", "Unsqueeze"), name="new_dims")],
)
def repeat(g, x, repeats):
    return _tile(g, x, list(repeats))


@exporter(
    "aten.tile.default",
    samples=[Sample(lambda x: x.tile((2,)), (_X,), emits=("Tile",)),
             Sample(lambda x: x.tile((2, 1, 1, 1)), (_X,), emits=("Tile",), name="new_dims")],
)
def tile(g, x, dims):
    """Repeats for the trailing dims; missing leading ones are 1."""
    dims = list(dims)
    return _tile(g, x, [1] * (g.rank(x) - len(dims)) + dims)
