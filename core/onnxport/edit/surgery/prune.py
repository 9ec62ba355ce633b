"""Pruning channels: slice every tensor of a size group by one choice of indices."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnx_ir as ir

from ._model import SizeAlignmentError, const_array, copy_model, finish, private_const, set_const
from .analysis import analyze
from .groups import OUT_ROLES, Group, Member, Segment, SizeGroups, channel_indices


def _per_channel(groups: SizeGroups, m: Member, gid: int) -> np.ndarray | None:
    """Mean absolute value of each channel of group ``gid`` in parameter member ``m``."""
    arr = const_array(m.value)
    if arr is None or not np.issubdtype(arr.dtype, np.floating):
        return None
    moved = np.moveaxis(np.abs(arr.astype(np.float64)), m.axis, 0)
    flat = moved.reshape(moved.shape[0], -1)
    pos, total, count = 0, None, 0
    for s in m.layout:
        n = groups[s.group].size
        width = s.outer * n * s.inner
        if s.group == gid:
            block = flat[pos:pos + width].reshape(s.outer, n, s.inner, -1)
            part = block.sum(axis=(0, 2, 3))
            total = part if total is None else total + part
            count += s.outer * s.inner * flat.shape[1]
        pos += width
    return None if total is None else total / max(count, 1)


def channel_scores(groups: SizeGroups) -> dict[int, np.ndarray]:
    """The L1 score of every channel of every group: summed over the group's producing weights.

    A channel's score adds, over every producer-side parameter of its group (weights, biases,
    norm scales and shifts, depthwise kernels), the mean absolute value of its slice. A residual
    group is scored over all of its branches at once.
    """
    scores: dict[int, np.ndarray] = {}
    for g in groups:
        total = np.zeros(g.size)
        for m in g.params:
            if m.role in OUT_ROLES:
                part = _per_channel(groups, m, g.id)
                if part is not None:
                    total += part
        scores[g.id] = total
    return scores


def _resolve_keep(groups: SizeGroups, keep: Mapping[str | int, Sequence[int]]) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    for key, idx in keep.items():
        k = np.unique(np.asarray(list(idx), dtype=np.int64))
        if len(k) != len(list(idx)):
            raise SizeAlignmentError(f"keep[{key!r}] repeats channel indices")
        layout = [Segment(groups[key].id)] if isinstance(key, int) else groups.channel_layout(key)
        if len(layout) > 1 and any(s.outer != 1 or s.inner != 1 for s in layout):
            raise SizeAlignmentError(f"keep[{key!r}]: its channels interleave several groups; name their layers")
        pos = 0
        for s in layout:  # a Concat output or a divided group: indices split by offset
            g = groups[s.group]
            width = g.size
            part = k[(k >= pos) & (k < pos + width)] - pos
            if len(layout) == 1 and (k.size and (k[0] < 0 or k[-1] >= g.size)):
                raise SizeAlignmentError(f"keep[{key!r}] has indices outside 0..{g.size - 1} (group {g.name!r})")
            pos += width
            if part.size == 0:
                raise SizeAlignmentError(f"keep[{key!r}] keeps no channel of group {g.name!r}; at least one must stay")
            if g.fixed and part.size != g.size:
                raise SizeAlignmentError(f"cannot prune {key!r} (group {g.name!r}): {g.fixed}")
            if g.id in out and not np.array_equal(out[g.id], part):
                raise SizeAlignmentError(f"keep names group {g.name!r} twice with different indices ({key!r})")
            out[g.id] = part
        if k.size and (k[0] < 0 or k[-1] >= pos):
            raise SizeAlignmentError(f"keep[{key!r}] has indices outside 0..{pos - 1}")
    return out


def choose(groups: SizeGroups, fraction: float, per: str = "layer", multiple_of: int = 1) -> dict[int, np.ndarray]:
    """Indices to keep per group when removing ``fraction`` of the channels by L1 score.

    ``per="layer"`` removes that fraction of every prunable group; ``per="global"`` removes that
    fraction of all prunable channels, comparing scores normalised by each group's mean. Every
    group keeps at least one channel; fixed groups are left alone. With ``multiple_of=n`` every
    pruned group keeps a multiple of ``n`` channels (rounded up: fewer are removed).
    """
    keep = _choose(groups, fraction, per)
    if multiple_of > 1:
        scores = channel_scores(groups)
        for gid, k in list(keep.items()):
            want = min(groups[gid].size, -(-len(k) // multiple_of) * multiple_of)
            if want > len(k):
                back = np.setdiff1d(np.arange(groups[gid].size), k)
                back = back[np.argsort(-scores[gid][back], kind="stable")][: want - len(k)]
                keep[gid] = np.sort(np.concatenate([k, back]))
            if len(keep[gid]) == groups[gid].size:
                del keep[gid]
    return keep


def _choose(groups: SizeGroups, fraction: float, per: str) -> dict[int, np.ndarray]:
    if not 0 <= fraction < 1:
        raise SizeAlignmentError(f"fraction must be in [0, 1), got {fraction}")
    if per not in ("layer", "global"):
        raise SizeAlignmentError(f"per must be 'layer' or 'global', got {per!r}")
    scores = channel_scores(groups)
    free = [g for g in groups if g.prunable]
    keep: dict[int, np.ndarray] = {}
    if per == "layer":
        for g in free:
            drop = min(int(math.floor(fraction * g.size + 1e-9)), g.size - 1)
            if drop:
                order = np.argsort(scores[g.id], kind="stable")
                keep[g.id] = np.sort(order[drop:])
        return keep
    entries = []
    for g in free:
        s = scores[g.id]
        mean = s.mean()
        norm = s / mean if mean > 0 else np.zeros_like(s)
        entries += [(float(v), g.id, c) for c, v in enumerate(norm)]
    entries.sort()
    budget = int(math.floor(fraction * sum(g.size for g in free) + 1e-9))
    left = {g.id: g.size for g in free}
    dropped: dict[int, set[int]] = {g.id: set() for g in free}
    for _, gid, c in entries:
        if budget <= 0:
            break
        if left[gid] > 1:
            dropped[gid].add(c)
            left[gid] -= 1
            budget -= 1
    for g in free:
        if dropped[g.id]:
            keep[g.id] = np.array([c for c in range(g.size) if c not in dropped[g.id]], dtype=np.int64)
    return keep


def new_size(groups: dict[int, Group], layout: list[Segment], sizes: dict[int, int]) -> int:
    return sum(s.outer * sizes.get(s.group, groups[s.group].size) * s.inner for s in layout)


def apply_settings(model: ir.Model, groups: SizeGroups, sizes: dict[int, int]) -> None:
    """Rewrite shape, split and slice constants for the new group sizes."""
    graph = model.graph
    gmap = {g.id: g for g in groups}
    done: set[tuple[int, int]] = set()
    for g in groups:
        for m in g.members:
            if m.kind not in ("shape", "split", "slice", "group") or (id(m), 0) in done:
                continue
            done.add((id(m), 0))
            node = m.node
            if m.kind == "group":
                node.attributes["group"] = ir.AttrInt64("group", new_size(gmap, m.layout, sizes))
            elif m.kind == "shape":
                index = list(node.inputs).index(m.value)
                v = private_const(graph, node, index)
                arr = const_array(v).copy()
                arr.reshape(-1)[m.entry] = new_size(gmap, m.layout, sizes)
                set_const(v, arr)
            elif m.kind == "split":
                _split_sizes(graph, node, gmap, sizes)
            else:
                start = new_size(gmap, m.before.layout, sizes)
                end = start + new_size(gmap, m.layout, sizes)
                for index, val in ((1, start), (2, end)):
                    if node.attributes.get("starts") is not None:
                        name = "starts" if index == 1 else "ends"
                        vals = list(node.attributes[name].value)
                        vals[m.entry] = val
                        node.attributes[name] = ir.AttrInt64s(name, vals)
                        continue
                    v = private_const(graph, node, index)
                    arr = const_array(v).copy()
                    arr.reshape(-1)[m.entry] = val
                    set_const(v, arr)


def _split_sizes(graph: ir.Graph, node: ir.Node, gmap: dict[int, Group], sizes: dict[int, int]) -> None:
    parts = {}
    for g in gmap.values():
        for m in g.members:
            if m.kind == "split" and m.node is node:
                parts[m.entry] = new_size(gmap, m.layout, sizes)
    dims = []
    for i, out in enumerate(node.outputs):
        old = out.shape[int(node.attributes["axis"].value) if "axis" in node.attributes else 0] if out.shape else None
        dims.append(parts.get(i, old))
    arr = np.asarray(dims, dtype=np.int64)
    if "split" in node.attributes:
        node.attributes["split"] = ir.AttrInt64s("split", [int(d) for d in arr])
    elif len(node.inputs) > 1 and node.inputs[1] is not None:
        set_const(private_const(graph, node, 1), arr)
    else:
        v = ir.Value(name=f"{node.name or 'split'}_sizes", shape=ir.Shape(arr.shape),
                     type=ir.TensorType(ir.DataType.INT64), const_value=ir.tensor(arr))
        graph.register_initializer(v)
        while len(node.inputs) < 2:
            node.resize_inputs(len(node.inputs) + 1)
        node.replace_input_with(1, v)
        node.attributes.pop("num_outputs", None)


def apply_keep(model: ir.Model, groups: SizeGroups, keep: dict[int, np.ndarray]) -> None:
    """Slice every parameter of the groups in ``keep`` and rewrite the settings that follow."""
    gmap = {g.id: g for g in groups}
    params: dict[tuple[int, int], Member] = {}
    for gid in keep:
        for m in gmap[gid].params:
            params[(id(m.value), m.axis)] = m
    for m in params.values():
        arr = const_array(m.value)
        idx = channel_indices(gmap, m.layout, keep)
        set_const(m.value, np.take(arr, idx, axis=m.axis))
    apply_settings(model, groups, {gid: len(k) for gid, k in keep.items()})


def prune_channels(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    keep: Mapping[str | int, Sequence[int]] | None = None,
    *,
    fraction: float | None = None,
    per: str = "layer",
    multiple_of: int = 1,
) -> ir.Model:
    """A copy of ``model`` with channels removed, every tensor of their size group sliced alike.

    ``keep`` maps a layer (node name, output value name, or group id from :func:`size_groups`)
    to the indices of its output channels to keep. Or give ``fraction``: the channels with the
    lowest L1 score (:func:`channel_scores`) are removed, ``per="layer"`` (that fraction of each
    group) or ``per="global"``; at least one channel stays per group, and with ``multiple_of=n`` a
    multiple of ``n`` (fast kernels often want multiples of 8). Weights, biases, norm
    statistics, the consumers' input channels, Concat offsets, Split/Slice ranges and Reshape
    targets follow. Raises :class:`SizeAlignmentError` naming the node for a group that cannot
    change size (it reaches a graph output, a run-time Reshape, a Gather on channels ...).
    """
    if (keep is None) == (fraction is None):
        raise SizeAlignmentError("give either keep={layer: indices} or fraction=...")
    m = copy_model(model)
    groups = analyze(m)
    chosen = _resolve_keep(groups, keep) if keep is not None else choose(groups, fraction, per, multiple_of)
    chosen = {gid: k for gid, k in chosen.items() if len(k) != groups[gid].size}
    apply_keep(m, groups, chosen)
    return finish(m)
