"""Pad (constant, reflect, edge, wrap; negative pads crop) and CenterCropPad."""

from __future__ import annotations

import numpy as np

from onnxport import importer

from ._static import ints, xp

_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}


@importer("Pad", since=25)
def pad(ctx, data, pads, constant_value=None, axes=None, *, mode):
    """Pads (or, for negative amounts, crops) ``data``; pads and axes must be static."""
    if mode not in _MODES:
        raise ctx.error(f"unknown Pad mode {mode!r}")
    m = xp(data)
    rank = data.ndim
    amounts = ints(ctx, 1, pads)
    axes_ = [a % rank for a in ints(ctx, 3, axes)] if axes is not None else list(range(rank))
    k = len(axes_)
    if len(amounts) != 2 * k:
        raise ctx.error(f"pads has {len(amounts)} values, expected {2 * k} for axes {axes_}")
    before, after = [0] * rank, [0] * rank
    for j, a in enumerate(axes_):
        before[a], after[a] = amounts[j], amounts[k + j]
    # negative pads crop first
    crop = tuple(slice(max(-b, 0), data.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(zip(before, after)))
    if any(b < 0 or e < 0 for b, e in zip(before, after)):
        data = data[crop]
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(before, after)]
    if not any(b or e for b, e in widths):
        return data
    if mode == "constant":
        value = 0 if constant_value is None else _pad_value(ctx, constant_value)
        if m is np:
            return np.pad(data, widths, mode="constant", constant_values=np.asarray(value, data.dtype))
        import jax.numpy as jnp
        return jnp.pad(data, widths, mode="constant",
                       constant_values=jnp.asarray(value).reshape(()).astype(data.dtype))
    return m.pad(data, widths, mode=_MODES[mode])


def _pad_value(ctx, v):
    """The pad value: a host scalar when known statically, else the (traced) scalar array."""
    c = ctx.const(2)
    if c is not None:
        return np.asarray(c).reshape(())
    return v


@importer("CenterCropPad", since=18)
def center_crop_pad(ctx, x, shape, *, axes):
    """Crop or zero-pad each listed axis to ``shape``, centred (extra element at the end)."""
    rank = x.ndim
    target = ints(ctx, 1, shape)
    axes_ = [a % rank for a in axes] if axes else list(range(rank))
    m = xp(x)
    for a, size in zip(axes_, target):
        dim = x.shape[a]
        if size < dim:
            start = (dim - size) // 2
            idx = [slice(None)] * rank
            idx[a] = slice(start, start + size)
            x = x[tuple(idx)]
        elif size > dim:
            d = size - dim
            widths = [(0, 0)] * rank
            widths[a] = (d // 2, d - d // 2)
            x = m.pad(x, widths)
    return x


