"""Widening a layer: new output channels that leave the model's outputs unchanged."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnx_ir as ir

from ._model import SizeAlignmentError, const_array, copy_model, finish, set_const
from .analysis import analyze
from .groups import Member, Segment, SizeGroups, channel_indices
from .prune import apply_settings

#: the value new channels of a parameter get with ``init="zeros"`` (weights: random, see below)
FILL = {"bias": 0.0, "shift": 0.0, "mean": 0.0, "var": 1.0, "scale": 1.0, "in": 0.0}


def _block_vector(groups: SizeGroups, layout: list[Segment], gid: int, per_channel: np.ndarray,
                  other: float) -> np.ndarray:
    """A vector along an axis with ``layout``: ``per_channel`` on group ``gid``'s (widened) channels."""
    parts = []
    for s in layout:
        if s.group == gid:
            block = np.broadcast_to(per_channel[None, :, None], (s.outer, per_channel.size, s.inner))
            parts.append(block.reshape(-1))
        else:
            parts.append(np.full(s.outer * groups[s.group].size * s.inner, other))
    return np.concatenate(parts)


def _along(vec: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = vec.size
    return vec.reshape(shape)


def _widen_param(groups: SizeGroups, m: Member, gid: int, idx: np.ndarray, old: int, init: str,
                 rng: np.random.Generator) -> np.ndarray:
    arr = const_array(m.value)
    gmap = {g.id: g for g in groups}
    out = np.take(arr, channel_indices(gmap, m.layout, {gid: idx}), axis=m.axis)
    fresh = _along(_block_vector(groups, m.layout, gid, (np.arange(idx.size) >= old).astype(float), 0.0) > 0,
                   m.axis, arr.ndim)
    if init == "net2net":
        if m.role == "in":
            counts = np.bincount(idx, minlength=old)
            scale = _block_vector(groups, m.layout, gid, 1.0 / counts[idx], 1.0)
            out = (out * _along(scale, m.axis, arr.ndim)).astype(arr.dtype)
        return out
    if m.role in FILL:
        return np.where(fresh, np.asarray(FILL[m.role], dtype=arr.dtype), out)
    if m.role in ("weight", "depthwise") and np.issubdtype(arr.dtype, np.floating):
        std = float(arr.std()) or 1.0
        noise = rng.standard_normal(out.shape).astype(arr.dtype) * std
        return np.where(fresh, noise, out)
    return out  # slopes and elementwise constants: copies of existing channels


def widen_channels(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    layer: str,
    new_size: int,
    init: str = "zeros",
    *,
    seed: int = 0,
) -> ir.Model:
    """A copy of ``model`` where ``layer`` (node or output value name) has ``new_size`` output channels.

    Every tensor of the layer's size group grows alike (residual partners, norms, concat offsets,
    reshape targets). ``init="zeros"``: new producer weights are random (scaled like the existing
    ones), biases 0, norms the identity, and the consumers' new input weights are 0, so the outputs
    are unchanged. ``init="net2net"``: each new channel copies a random existing one and the
    consumers' weights of every copied channel are divided among its copies (function-preserving).
    Raises :class:`SizeAlignmentError` for a fixed group, or one that a LayerNorm, Softmax,
    reduction or activation-by-activation MatMul mixes (new channels would change the outputs).
    """
    if init not in ("zeros", "net2net"):
        raise SizeAlignmentError(f"init must be 'zeros' or 'net2net', got {init!r}")
    m = copy_model(model)
    groups = analyze(m)
    g = groups.group_of(layer)
    if g.fixed:
        raise SizeAlignmentError(f"cannot widen {layer!r} (group {g.name!r}): {g.fixed}")
    if new_size <= g.size:
        raise SizeAlignmentError(f"{layer!r} has {g.size} channels; widen to more (prune_channels removes)")
    if g.mixes:
        raise SizeAlignmentError(
            f"cannot widen {layer!r} without changing outputs: {g.mixes[0]} combines its channels")
    rng = np.random.default_rng(seed)
    old = g.size
    idx = np.concatenate([np.arange(old), rng.integers(0, old, new_size - old)])
    done: set[tuple[int, int]] = set()
    for p in g.params:
        key = (id(p.value), p.axis)
        if key in done:
            continue
        done.add(key)
        set_const(p.value, _widen_param(groups, p, g.id, idx, old, init, rng))
    apply_settings(m, groups, {g.id: new_size})
    return finish(m)
