"""Pad (constant, reflect, edge, wrap; negative pads crop) and CenterCropPad."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import ints, rank, tensor


def _wrap_pad(x, widths):
    for a, (b, e) in enumerate(widths):
        if b or e:
            n = x.shape[a]
            idx = np.arange(-b, n + e) % n
            x = tf.gather(x, idx, axis=a)
    return x


@importer("Pad", since=25)
def pad(ctx, data, pads, constant_value=None, axes=None, *, mode):
    """Pads (or, for negative amounts, crops) ``data``; pads and axes must be static."""
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ctx.error(f"unknown Pad mode {mode!r}")
    data = tensor(data)
    r = rank(data)
    amounts = ints(ctx, 1, pads)
    axes_ = [a % r for a in ints(ctx, 3, axes)] if axes is not None else list(range(r))
    k = len(axes_)
    if len(amounts) != 2 * k:
        raise ctx.error(f"pads has {len(amounts)} values, expected {2 * k} for axes {axes_}")
    before, after = [0] * r, [0] * r
    for j, a in enumerate(axes_):
        before[a], after[a] = amounts[j], amounts[k + j]
    if any(b < 0 or e < 0 for b, e in zip(before, after)):  # negative pads crop first
        crop = tuple(slice(max(-b, 0), (-e if e < 0 else None)) for b, e in zip(before, after))
        data = data[crop]
    widths = [[max(b, 0), max(e, 0)] for b, e in zip(before, after)]
    if not any(b or e for b, e in widths):
        return data
    if mode == "constant":
        value = tf.zeros((), data.dtype) if constant_value is None else \
            tf.cast(tf.reshape(tensor(constant_value), []), data.dtype)
        return tf.pad(data, widths, constant_values=value)
    if mode == "wrap":
        return _wrap_pad(data, widths)
    if mode == "edge":
        for a, (b, e) in enumerate(widths):
            if b or e:
                n = data.shape[a]
                data = tf.gather(data, np.clip(np.arange(-b, n + e), 0, n - 1), axis=a)
        return data
    return tf.pad(data, widths, mode="REFLECT")


@importer("CenterCropPad", since=18)
def center_crop_pad(ctx, x, shape, *, axes):
    """Crop or zero-pad each listed axis to ``shape``, centred (extra element at the end)."""
    x = tensor(x)
    r = rank(x)
    target = ints(ctx, 1, shape)
    axes_ = [a % r for a in axes] if axes else list(range(r))
    for a, size in zip(axes_, target):
        d = x.shape[a]
        if size < d:
            start = (d - size) // 2
            idx = [slice(None)] * r
            idx[a] = slice(start, start + size)
            x = x[tuple(idx)]
        elif size > d:
            widths = [[0, 0]] * r
            widths[a] = [(size - d) // 2, (size - d) - (size - d) // 2]
            x = tf.pad(x, widths)
    return x
