"""Slice (static starts/ends/axes/steps, ONNX clamping) and Split (static pieces)."""

from __future__ import annotations

from onnxport import importer
from onnxport.opmath.slicing import even_split, onnx_slice

from ._static import ints


@importer("Slice", since=13)
def slice_(ctx, data, starts, ends, axes=None, steps=None):
    starts_ = ints(ctx, 1, starts)
    ends_ = ints(ctx, 2, ends)
    axes_ = ints(ctx, 3, axes) if axes is not None else list(range(len(starts_)))
    steps_ = ints(ctx, 4, steps) if steps is not None else [1] * len(starts_)
    idx = [slice(None)] * data.ndim
    for s, e, a, st in zip(starts_, ends_, axes_, steps_):
        if st == 0:
            raise ctx.error("Slice step must not be 0")
        a %= data.ndim
        idx[a] = onnx_slice(int(data.shape[a]), s, e, st)
    return data[tuple(idx)]


def split_sizes(ctx, dim: int, n: int | None, parts: int) -> list[int]:
    """Piece sizes when no explicit split is given: ceil(dim / n) each, the last smaller."""
    with ctx.raising():
        return even_split(dim, n or parts)


@importer("Split", since=18)
def split(ctx, x, split=None, *, axis, num_outputs):
    axis %= x.ndim
    dim = int(x.shape[axis])
    if split is not None:
        sizes = ints(ctx, 1, split)
        if sum(sizes) != dim:
            raise ctx.error(f"split sizes {sizes} do not add up to dimension {axis} ({dim})")
    else:
        sizes = split_sizes(ctx, dim, num_outputs, ctx.num_outputs)
    out, start = [], 0
    for s in sizes:
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(start, start + s)
        out.append(x[tuple(idx)])
        start += s
    return tuple(out) if ctx.num_outputs > 1 else out[0]
