"""Indexing: slice, dynamic_slice, dynamic_update_slice, gather and scatter in the forms numpy
indexing produces (-> Slice, Gather, GatherND, ScatterND with reductions).

Gather/scatter: every indexed operand dim is collapsed (``x[idx]``, ``x[:, idx]``, ``x[i, j]``,
``x.at[idx].set/add/mul/min/max``) and the others are taken whole; the indexed dims are moved to
the front, GatherND / ScatterND run there and the result dims are put in JAX's order. Modes: CLIP
clamps the indices; FILL_OR_DROP gathers fill out-of-range rows (NaN for floats, as JAX) and
drops out-of-range scatter updates.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import onnx_ir as ir
from jax import lax

from onnxport import Sample, exporter

from ._samples import randint, randn

_X = randn(4, 5, 6)


@exporter("lax.slice", samples=[
    Sample(lambda x: x[1:3, :, 2:], (_X,), emits=("Slice",)),
    Sample(lambda x: x[::2, 1::3], (_X,), emits=("Slice",), name="strided"),
])
def slice_(g, x, *, start_indices, limit_indices, strides=None):
    n = len(start_indices)
    steps = [1] * n if strides is None else [int(s) for s in strides]
    return g.op("Slice", x, g.shape(start_indices), g.shape(limit_indices),
                g.const(np.arange(n, dtype=np.int64)), g.const(np.asarray(steps, dtype=np.int64)))


def _clamped_starts(g, x, starts, sizes):
    """The start indices as one int64 vector, clamped to ``[0, dim - size]`` as JAX does."""
    parts = []
    for axis, (s, size) in enumerate(zip(starts, sizes)):
        s = g.as_1d(g.cast(s, ir.DataType.INT64))
        hi = g.op("Sub", g.ints([g.dim(x.shape[axis])]), g.ints([g.dim(size)]))
        parts.append(g.op("Max", g.op("Min", s, hi), g.ints([0])))
    return g.op("Concat", *parts, axis=0)


@exporter("lax.dynamic_slice", samples=[
    Sample(lambda x, i: lax.dynamic_slice(x, (i, 1, 0), (2, 3, 6)), (_X, jnp.asarray(1, jnp.int32)), emits=("Slice",)),
    Sample(lambda x, i: lax.dynamic_slice(x, (i, 0, 0), (2, 3, 6)), (_X, jnp.asarray(7, jnp.int32)), emits=("Slice",),
           name="clamped"),
    Sample(lambda x, i: x[i], (_X, jnp.asarray(-1, jnp.int32)), emits=("Slice",), name="negative_index"),
])
def dynamic_slice(g, x, *starts, slice_sizes):
    begin = _clamped_starts(g, x, starts[: len(slice_sizes)], slice_sizes)
    end = g.op("Add", begin, g.shape(slice_sizes))
    return g.op("Slice", x, begin, end, g.const(np.arange(len(slice_sizes), dtype=np.int64)))


def _grid(g, starts: ir.Value, shape) -> ir.Value:
    """Indices ``[..., rank]`` of every element of a block of ``shape`` placed at ``starts``."""
    rank = len(shape)
    parts = []
    for axis in range(rank):
        n = g.dim_or_none(shape[axis])
        start = g.op("Gather", starts, g.const(np.asarray(axis, dtype=np.int64)), axis=0)
        if n is not None:
            r = g.const(np.arange(n, dtype=np.int64))
        else:
            n1 = g.op("Squeeze", g.dim(shape[axis]), g.const(np.asarray([0], dtype=np.int64)))
            r = g.op("Range", g.const(np.asarray(0, dtype=np.int64)), n1, g.const(np.asarray(1, dtype=np.int64)))
        r = g.op("Add", r, start)
        others = [i for i in range(rank) if i != axis] + [rank]
        r = g.op("Unsqueeze", r, g.const(np.asarray(others, dtype=np.int64)))
        parts.append(g.op("Expand", r, g.shape(list(shape) + [1])))
    return g.op("Concat", *parts, axis=-1)


@exporter("lax.dynamic_update_slice", samples=[
    Sample(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1, 0)), (_X, randn(2, 3, 6), jnp.asarray(1, jnp.int32)),
           emits=("ScatterND",)),
    Sample(lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 0), (_X, randn(5, 6), jnp.asarray(3, jnp.int32)),
           emits=("ScatterND",), name="row"),
])
def dynamic_update_slice(g, x, update, *starts):
    """ScatterND of the update's elements at the (clamped) start."""
    shape = list(update.shape)
    begin = _clamped_starts(g, x, starts, shape)
    return g.op("ScatterND", x, _grid(g, begin, shape), update)


def _index_plan(g, operand_rank, indexed, window_dims_out, out_rank):
    """The permutation putting ``indexed`` operand dims first, and, for a result laid out as
    [batch dims..., remaining operand dims...], the permutation to JAX's order where the window
    dims sit at ``window_dims_out``."""
    rest = [d for d in range(operand_rank) if d not in indexed]
    perm = list(indexed) + rest
    n_batch = out_rank - len(window_dims_out)
    order = []
    batch_i, win_i = 0, 0
    for pos in range(out_rank):
        if pos in window_dims_out:
            order.append(n_batch + win_i)
            win_i += 1
        else:
            order.append(batch_i)
            batch_i += 1
    return perm, order


def _fill(dtype: np.dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


def _in_range(g, idx: ir.Value, sizes: ir.Value) -> ir.Value:
    """Per index row ``[..., k]``: whether every component is within ``[0, size)`` (bool ``[...]``)."""
    ok = g.op("And", g.op("GreaterOrEqual", idx, g.const(np.asarray(0, dtype=np.int64))), g.op("Less", idx, sizes))
    as_int = g.op("Cast", ok, to=ir.DataType.INT64)
    return g.op("Cast", g.op("ReduceMin", as_int, g.const(np.asarray([-1], dtype=np.int64)), keepdims=0),
                to=ir.DataType.BOOL)


@exporter("lax.gather", samples=[
    Sample(lambda x, i: x[i], (_X, randint(0, 4, 3)), emits=("GatherND",)),
    Sample(lambda x, i: x[:, i], (_X, randint(-5, 5, 2, 3, seed=1)), emits=("GatherND", "Transpose"), name="axis1"),
    Sample(lambda x, i, j: x[i, :, j], (_X, randint(0, 4, 3), randint(0, 6, 3)), emits=("GatherND",), name="two_arrays"),
    Sample(lambda x, i: jnp.take(x, i, axis=2, mode="clip"), (_X, randint(-3, 9, 4)), emits=("GatherND",), name="clip"),
    Sample(lambda x, i: jnp.take(x, i, axis=0, mode="fill"), (_X, randint(-2, 7, 4)), emits=("GatherND", "Where"), name="fill"),
    Sample(lambda e, t: e[t], (randn(10, 8), randint(0, 10, 2, 5)), emits=("GatherND",), name="embedding"),
    Sample(lambda x, i: jnp.take_along_axis(x, i, axis=0), (randn(3, 5), randint(0, 3, 4, 5)),
           emits=("GatherElements",), name="take_along_axis"),
    Sample(lambda x, i: jnp.take_along_axis(x, i, axis=-1, mode="fill"), (randn(2, 3, 5), randint(-1, 7, 2, 3, 2)),
           emits=("GatherElements", "Where"), name="take_along_last_fill"),
])
def gather(g, x, idx, *, dimension_numbers, slice_sizes, mode, fill_value=None, **_):
    dn = dimension_numbers
    if dn.operand_batching_dims:
        return _take_along(g, x, idx, dn, mode, fill_value)
    indexed = list(dn.start_index_map)
    rank = g.rank(x)
    if sorted(dn.collapsed_slice_dims) != sorted(indexed):
        raise g.error(f"only gathers of whole slices at collapsed dims are exported (collapsed "
                      f"{dn.collapsed_slice_dims}, indexed {dn.start_index_map})")
    for d in range(rank):
        if d not in indexed and g.dim_or_none(slice_sizes[d]) != g.dim_or_none(x.shape[d]):
            raise g.error(f"dim {d} is sliced ({slice_sizes[d]} of {x.shape[d]}): only whole slices are exported")
    out_rank = len(g.out_shape())
    perm, order = _index_plan(g, rank, indexed, list(dn.offset_dims), out_rank)
    xt = g.op("Transpose", x, perm=perm) if perm != list(range(rank)) else x
    ids = g.cast(idx, ir.DataType.INT64)
    sizes = g.ints([g.dim(x.shape[d]) for d in indexed])
    mode = lax.GatherScatterMode.from_any(mode)
    valid = None
    if mode == lax.GatherScatterMode.CLIP or mode == lax.GatherScatterMode.FILL_OR_DROP:
        if mode == lax.GatherScatterMode.FILL_OR_DROP:
            valid = _in_range(g, ids, sizes)
        ids = g.op("Max", g.op("Min", ids, g.op("Sub", sizes, g.const(np.asarray(1, dtype=np.int64)))),
                   g.const(np.asarray(0, dtype=np.int64)))
    y = g.op("GatherND", xt, ids)
    if valid is not None:
        fill = _fill(g.out_aval().dtype) if fill_value is None else fill_value
        n_win = rank - len(indexed)
        mask = g.op("Unsqueeze", valid, g.const(np.arange(-n_win, 0, dtype=np.int64))) if n_win else valid
        y = g.op("Where", mask, y, g.scalar(fill, g.out_dtype()))
    return g.op("Transpose", y, perm=order) if order != list(range(out_rank)) else y


def _take_along(g, x, idx, dn, mode, fill_value):
    """``take_along_axis``: every dim but one is a batching dim, at the same place in the indices
    (laid out as the operand, plus a trailing 1) -> GatherElements along the remaining one."""
    rank = g.rank(x)
    (axis,) = dn.start_index_map if len(dn.start_index_map) == 1 else (None,)
    others = [d for d in range(rank) if d != axis]
    if (axis is None or list(dn.collapsed_slice_dims) != [axis] or list(dn.operand_batching_dims) != others
            or list(dn.start_indices_batching_dims) != others or dn.offset_dims):
        raise g.error("only the take_along_axis form of batched gathers is exported")
    last = g.const(np.asarray([-1], dtype=np.int64))
    ids = g.cast(g.op("Squeeze", idx, last), ir.DataType.INT64)  # laid out as x, plus a trailing 1
    n = g.ints([g.dim(x.shape[axis])])
    mode = lax.GatherScatterMode.from_any(mode)
    valid = None
    zero = g.const(np.asarray(0, dtype=np.int64))
    if mode in (lax.GatherScatterMode.CLIP, lax.GatherScatterMode.FILL_OR_DROP):
        if mode == lax.GatherScatterMode.FILL_OR_DROP:
            valid = g.op("And", g.op("GreaterOrEqual", ids, zero), g.op("Less", ids, n))
        ids = g.op("Max", g.op("Min", ids, g.op("Sub", n, g.const(np.asarray(1, dtype=np.int64)))), zero)
    y = g.op("GatherElements", x, ids, axis=int(axis))
    if valid is not None:
        fill = _fill(g.out_aval().dtype) if fill_value is None else fill_value
        y = g.op("Where", valid, y, g.scalar(fill, g.out_dtype()))
    return y


def _scatter(reduction: str | None):
    def prim(g, x, idx, updates, *, dimension_numbers, mode, **_):
        dn = dimension_numbers
        if dn.operand_batching_dims:
            raise g.error("scatters with batching dims are not exported yet")
        indexed = list(dn.scatter_dims_to_operand_dims)
        rank = g.rank(x)
        if sorted(dn.inserted_window_dims) != sorted(indexed):
            raise g.error("only scatters of whole slices at inserted dims are exported")
        rest = [d for d in range(rank) if d not in indexed]
        perm = indexed + rest
        upd_rank = g.rank(updates)
        win = list(dn.update_window_dims)
        batch = [d for d in range(upd_rank) if d not in win]
        for w, d in zip(win, rest):
            if g.dim_or_none(updates.shape[w]) != g.dim_or_none(x.shape[d]):
                raise g.error("only scatters of whole slices are exported")
        xt = g.op("Transpose", x, perm=perm) if perm != list(range(rank)) else x
        ut = g.op("Transpose", updates, perm=batch + win) if batch + win != list(range(upd_rank)) else updates
        ids = g.cast(idx, ir.DataType.INT64)
        sizes = g.ints([g.dim(x.shape[d]) for d in indexed])
        mode = lax.GatherScatterMode.from_any(mode)
        zero = g.const(np.asarray(0, dtype=np.int64))
        if mode == lax.GatherScatterMode.CLIP:
            ids = g.op("Max", g.op("Min", ids, g.op("Sub", sizes, g.const(np.asarray(1, dtype=np.int64)))), zero)
        elif mode == lax.GatherScatterMode.FILL_OR_DROP:
            # out-of-range updates are dropped: they go to a padding row past the end, cut off after
            valid = _in_range(g, ids, sizes)
            k = len(indexed)
            mask = g.op("Unsqueeze", valid, g.const(np.asarray([-1], dtype=np.int64)))
            ids = g.op("Where", mask, ids, g.op("Expand", sizes, g.op("Shape", ids)))
            pads = [0] * (2 * rank)
            for j in range(k):
                pads[rank + j] = 1
            xt = g.op("Pad", xt, g.const(np.asarray(pads, dtype=np.int64)))
        y = g.op("ScatterND", xt, ids, ut, reduction=reduction)
        if mode == lax.GatherScatterMode.FILL_OR_DROP:
            k = len(indexed)
            y = g.op("Slice", y, g.const(np.zeros(k, dtype=np.int64)), sizes, g.const(np.arange(k, dtype=np.int64)))
        inv = [perm.index(d) for d in range(rank)]
        return g.op("Transpose", y, perm=inv) if perm != list(range(rank)) else y

    return prim


_U = randn(3, 5, 6)
_SCATTER = {
    "scatter": (None, lambda x, i, u: x.at[i].set(u)),
    "scatter-add": ("add", lambda x, i, u: x.at[i].add(u)),
    "scatter-mul": ("mul", lambda x, i, u: x.at[i].multiply(u)),
    "scatter-min": ("min", lambda x, i, u: x.at[i].min(u)),
    "scatter-max": ("max", lambda x, i, u: x.at[i].max(u)),
}
for _name, (_red, _fn) in _SCATTER.items():
    _prim = _scatter(_red)
    _py = _name.replace("-", "_")
    _prim.__name__ = _prim.__qualname__ = _py
    _prim.__module__ = __name__
    _prim.__doc__ = f"lax.{_name} -> ScatterND" + (f" (reduction {_red!r})." if _red else ".")
    _samples = [Sample(_fn, (_X, jnp.asarray([0, 2, 3], jnp.int32), _U), emits=("ScatterND",))]
    if _red in (None, "add"):
        _samples.append(Sample(lambda x, i, u, f=_fn: f(x, i, u), (_X, jnp.asarray([1, 9, -1], jnp.int32), _U),
                               emits=("ScatterND",), name="out_of_range"))
        _samples.append(Sample(lambda x, i, u, r=_red: (x.at[:, i].set(u) if r is None else x.at[:, i].add(u)),
                               (_X, jnp.asarray([4, 0], jnp.int32), randn(4, 2, 6)), emits=("ScatterND", "Transpose"),
                               name="axis1"))
    globals()[_py] = exporter(f"lax.{_name}", samples=_samples)(_prim)
