"""Gather, GatherElements, GatherND, Where, Compress, NonZero and ReverseSequence.

Negative indices wrap as ONNX defines. Host (numpy) inputs stay numpy so shape computations
remain static. Compress (runtime condition) and NonZero have data-dependent output shapes: they
run eagerly and raise the context's DataDependentError, naming the node, under ``jax.jit``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import is_static, xp


def _wrap(m, idx, dim):
    return m.where(idx < 0, idx + dim, idx)


@importer("Gather", since=13)
def gather(ctx, data, indices, *, axis):
    m = xp(data, indices)
    axis %= data.ndim
    return m.take(data, _wrap(m, indices, data.shape[axis]), axis=axis)


@importer("GatherElements", since=13)
def gather_elements(ctx, data, indices, *, axis):
    m = xp(data, indices)
    axis %= data.ndim
    return m.take_along_axis(data, _wrap(m, indices, data.shape[axis]), axis=axis)


def _nd_index(m, data, indices, batch_dims):
    """The advanced-index tuple GatherND/ScatterND address: batch aranges + index columns."""
    k = indices.shape[-1]
    bshape = indices.shape[:batch_dims]
    inner = indices.shape[batch_dims:-1]
    cols = []
    for i in range(batch_dims):
        shape = [1] * (batch_dims + len(inner))
        shape[i] = bshape[i]
        cols.append(np.arange(bshape[i]).reshape(shape))
    for j in range(k):
        cols.append(_wrap(m, indices[..., j], data.shape[batch_dims + j]))
    return tuple(cols)


@importer("GatherND", since=13)
def gather_nd(ctx, data, indices, *, batch_dims):
    m = xp(data, indices)
    return data[_nd_index(m, data, indices, batch_dims)]


@importer("Where", since=16)
def where(ctx, condition, x, y):
    return xp(condition, x, y).where(condition, x, y)


@importer("Compress", since=28)
def compress(ctx, x, condition, *, axis):
    cond = ctx.const(1)
    if cond is None:
        cond = ctx.concrete(condition, "which slices Compress keeps")
    keep = np.nonzero(np.asarray(cond, bool).reshape(-1))[0]
    m = xp(x)
    if axis is None:
        return m.take(m.reshape(x, (-1,)), keep)
    return m.take(x, keep, axis=axis % x.ndim)


@importer("NonZero", since=13)
def non_zero(ctx, x):
    host = ctx.concrete(x, "the number of non-zero elements")
    out = np.array(np.nonzero(host), dtype=np.int64).reshape(host.ndim, -1)
    return out if is_static(x) else jnp.asarray(out)


@importer("ReverseSequence", since=28)
def reverse_sequence(ctx, x, sequence_lens, *, batch_axis, time_axis):
    m = xp(x, sequence_lens)
    t = np.arange(x.shape[time_axis])
    lens = sequence_lens.astype(np.int64) if m is np else sequence_lens
    src = m.where(t[None, :] < lens[:, None], lens[:, None] - 1 - t[None, :], t[None, :])  # [B, T]
    if batch_axis > time_axis:
        src = src.T
    shape = [1] * x.ndim
    shape[batch_axis], shape[time_axis] = x.shape[batch_axis], x.shape[time_axis]
    idx = m.broadcast_to(m.reshape(src, shape), x.shape)
    return m.take_along_axis(x, idx, axis=time_axis)
