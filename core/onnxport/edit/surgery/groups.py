"""Size groups: for every channel dimension, the tensors whose sizes must stay equal.

A *group* is one set of channels that several tensors share: a convolution's output channels,
the next layer's input weights, batch-norm statistics, the other branch of a residual ``Add``.
A tensor axis is described by its *layout*: the groups laid end to end along it. A ``Concat``
output's layout is its inputs' layouts in order (each group sits at an offset); a ``Flatten``
into a linear layer repeats every channel over the spatial positions (``inner``); a head split
``[b, s, h*d] -> [b, s, h, d]`` repeats the head-dim group once per head (``outer``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import onnx_ir as ir

from ._model import SizeAlignmentError, const_source, label, static_dims, weight_array

#: roles of a parameter along a group axis; ``OUT_ROLES`` are the producer side, scored for pruning
OUT_ROLES = frozenset({"weight", "bias", "scale", "shift", "depthwise"})


@dataclass(frozen=True)
class Segment:
    """``outer`` repeats of the group's channels, each channel repeated ``inner`` times."""

    group: int
    outer: int = 1
    inner: int = 1


@dataclass
class Member:
    """One tensor axis (or one entry of a shape constant) whose size follows a layout.

    ``kind`` is ``"value"`` (an activation), ``"param"`` (a weight/statistic sliced with the
    group), ``"shape"`` (entry ``entry`` of a Reshape/Expand/Resize target), ``"split"`` (the size
    of Split output ``entry``) or ``"slice"`` (entry ``entry`` of a Slice's starts/ends; ``layout``
    is the kept range) or ``"group"`` (a depthwise convolution's ``group`` attribute).
    """

    kind: str
    value: ir.Value
    axis: int
    layout: list[Segment]
    node: ir.Node | None = None
    role: str = ""
    entry: int = 0
    #: for ``"slice"``: the member whose layout is the part of the axis before the kept range
    before: Member | None = None


@dataclass
class Group:
    """One set of channels: its size, the layers producing it, and why it is fixed (if it is)."""

    id: int
    size: int
    producers: list[str] = field(default_factory=list)
    fixed: str | None = None
    mixes: list[str] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.producers[0] if self.producers else f"group{self.id}"

    @property
    def params(self) -> list[Member]:
        return [m for m in self.members if m.kind == "param"]

    @property
    def readers(self) -> list[str]:
        """Layers that read the group as input channels."""
        return _unique(m.node.name or m.node.op_type for m in self.params if m.role == "in" and m.node is not None)

    @property
    def values(self) -> list[str]:
        return _unique(m.value.name or "?" for m in self.members if m.kind == "value")

    @property
    def prunable(self) -> bool:
        return self.fixed is None and self.size > 1

    def __repr__(self) -> str:
        state = f"fixed: {self.fixed}" if self.fixed else "free"
        return f"<Group #{self.id} {self.name!r}: {self.size} channels, {state}>"

    def describe(self) -> str:
        head = f"#{self.id:<3d} {self.size:5d} ch  {', '.join(self.producers) or '(no producer)'}"
        lines = [head]
        if self.readers:
            lines.append(f"           read by: {_short(self.readers)}")
        params = _unique(f"{m.value.name}[{m.axis}]" for m in self.params)
        if params:
            lines.append(f"           params: {_short(params)}")
        if self.mixes:
            lines.append(f"           combined by: {_short(_unique(self.mixes), 3)}")
        if self.fixed:
            lines.append(f"           fixed: {self.fixed}")
        return "\n".join(lines)


def _unique(items) -> list[str]:
    out: list[str] = []
    for it in items:
        if it not in out:
            out.append(it)
    return out


def _short(items: list[str], n: int = 6) -> str:
    return ", ".join(items[:n]) + (f" ... (+{len(items) - n})" if len(items) > n else "")


class SizeGroups:
    """The size groups of one model (see :func:`size_groups`): iterable, indexable by id or layer."""

    def __init__(self, model: ir.Model, groups: dict[int, Group], created: dict[ir.Value, tuple[int, int]],
                 layouts: dict[ir.Value, dict[int, Member]]):
        #: the (private, shape-inferred) model the groups refer to
        self.model = model
        self._groups = groups
        self._created = created  # value -> (axis, group) for values whose producer creates a group
        self._layouts = layouts

    def __iter__(self) -> Iterator[Group]:
        return iter(sorted(self._groups.values(), key=lambda g: g.id))

    def __len__(self) -> int:
        return len(self._groups)

    def __getitem__(self, key: int | str) -> Group:
        if isinstance(key, int):
            return self._groups[key]
        return self.group_of(key)

    def layout(self, value: ir.Value) -> dict[int, list[Segment]]:
        """The tracked axes of ``value`` and their layouts."""
        return {a: list(m.layout) for a, m in self._layouts.get(value, {}).items()}

    def group_of(self, layer: str) -> Group:
        """The group of the output channels of ``layer`` (a node name or an output value name)."""
        lay = self.channel_layout(layer)
        if len(lay) != 1:
            raise SizeAlignmentError(
                f"{layer!r} has channels from {len(lay)} groups ({', '.join(self._groups[s.group].name for s in lay)}); "
                "name one of them")
        return self._groups[lay[0].group]

    def channel_layout(self, layer: str) -> list[Segment]:
        """The layout of the output channels of ``layer`` (a node name or an output value name)."""
        value = self._find(layer)
        tracked = self._layouts.get(value, {})
        if value in self._created:
            axis = self._created[value][0]
            if axis in tracked:
                return list(tracked[axis].layout)
        if len(tracked) == 1:
            return list(next(iter(tracked.values())).layout)
        what = f"node {label(value.producer())}" if value.producer() else repr(layer)
        raise SizeAlignmentError(
            f"{what} has {len(tracked)} channel axes ({sorted(tracked)}); name the layer that produces the channels"
        )

    def _find(self, layer: str) -> ir.Value:
        graph = self.model.graph
        nodes = [n for n in graph if n.name == layer]
        if len(nodes) > 1:
            raise SizeAlignmentError(f"{len(nodes)} nodes are named {layer!r}; name a value instead")
        if nodes:
            return nodes[0].outputs[0]
        for n in graph:
            for v in n.outputs:
                if v.name == layer:
                    return v
        raise SizeAlignmentError(f"the graph has no node or value named {layer!r}")

    def __repr__(self) -> str:
        free = sum(1 for g in self if g.prunable)
        return f"<SizeGroups: {len(self)} groups, {free} prunable>"

    def __str__(self) -> str:
        free = sum(1 for g in self if g.prunable)
        lines = [f"{len(self)} size groups ({free} prunable):"]
        lines += [g.describe() for g in self]
        return "\n".join(lines)


class Analysis:
    """Builds the groups: layouts of values, members, merges and refinements of groups."""

    def __init__(self, model: ir.Model):
        self.model = model
        self.groups: dict[int, Group] = {}
        self.members: list[Member] = []
        self.layouts: dict[ir.Value, dict[int, Member]] = {}
        self.params: dict[tuple[ir.Value, int], Member] = {}
        self.created: dict[ir.Value, tuple[int, int]] = {}
        self._next = 0

    # -- groups ------------------------------------------------------------------------------
    def new_group(self, size: int, producer: str | None = None, fixed: str | None = None) -> int:
        gid = self._next
        self._next += 1
        self.groups[gid] = Group(gid, int(size), [producer] if producer else [], fixed)
        return gid

    def fix(self, layout: list[Segment], reason: str) -> None:
        for s in layout:
            g = self.groups[s.group]
            if g.fixed is None:
                g.fixed = reason

    def merge(self, a: int, b: int, node: ir.Node) -> bool:
        """Make groups ``a`` and ``b`` one; ``False`` (both fixed) when their sizes differ."""
        if a == b:
            return True
        ga, gb = self.groups[a], self.groups[b]
        if ga.size != gb.size:
            reason = f"node {label(node)} joins {ga.size} and {gb.size} channels"
            ga.fixed, gb.fixed = ga.fixed or reason, gb.fixed or reason
            return False
        for m in self.members:
            if any(s.group == b for s in m.layout):
                m.layout[:] = [Segment(a, s.outer, s.inner) if s.group == b else s for s in m.layout]
        ga.producers += [p for p in gb.producers if p not in ga.producers]
        ga.mixes += gb.mixes
        ga.fixed = ga.fixed or gb.fixed
        for v, (axis, g) in list(self.created.items()):
            if g == b:
                self.created[v] = (axis, a)
        del self.groups[b]
        return True

    def unify(self, la: list[Segment], lb: list[Segment], node: ir.Node) -> list[Segment]:
        """Tie two layouts of one axis together; returns the joint layout."""
        ta = self.add(Member("tmp", None, 0, list(la)))  # type: ignore[arg-type]
        tb = self.add(Member("tmp", None, 0, list(lb)))  # type: ignore[arg-type]
        try:
            if not self._same_structure(ta.layout, tb.layout) and self.size(ta.layout) == self.size(tb.layout):
                cuts = sorted(set(self.cuts(ta.layout)) | set(self.cuts(tb.layout)))
                self.refine(ta, cuts, node) and self.refine(tb, cuts, node)
            if self._same_structure(ta.layout, tb.layout):
                for i in range(len(ta.layout)):
                    self.merge(ta.layout[i].group, tb.layout[i].group, node)
            else:
                reason = f"node {label(node)} joins channel layouts that cannot be aligned"
                self.fix(ta.layout, reason)
                self.fix(tb.layout, reason)
            return list(ta.layout)
        finally:
            self.members.remove(ta)
            self.members.remove(tb)

    def _same_structure(self, la: list[Segment], lb: list[Segment]) -> bool:
        return len(la) == len(lb) and all(
            x.outer == y.outer and x.inner == y.inner and self.groups[x.group].size == self.groups[y.group].size
            for x, y in zip(la, lb))

    def seg_size(self, s: Segment) -> int:
        return s.outer * self.groups[s.group].size * s.inner

    def size(self, layout: list[Segment]) -> int:
        return sum(self.seg_size(s) for s in layout)

    def cuts(self, layout: list[Segment]) -> list[int]:
        out, pos = [], 0
        for s in layout:
            pos += self.seg_size(s)
            out.append(pos)
        return out

    def refine(self, member: Member, cuts: list[int], node: ir.Node) -> bool:
        """Split groups so that every position in ``cuts`` falls between segments of ``member``."""
        for cut in cuts:
            pos = 0
            for s in list(member.layout):
                n = self.seg_size(s)
                if pos < cut < pos + n:
                    if s.outer != 1 or (cut - pos) % s.inner:
                        return False
                    if not self.split_group(s.group, (cut - pos) // s.inner, node):
                        return False
                    break
                pos += n
        return True

    def split_group(self, gid: int, first: int, node: ir.Node) -> bool:
        """Split group ``gid`` into its first ``first`` channels and the rest, everywhere."""
        g = self.groups[gid]
        for m in self.members:
            if any(s.group == gid and s.outer != 1 for s in m.layout):
                return False
        a = self.new_group(first, None, g.fixed)
        b = self.new_group(g.size - first, None, g.fixed)
        for x in (a, b):
            self.groups[x].producers = [f"{p}[{'lo' if x == a else 'hi'}]" for p in g.producers]
            self.groups[x].mixes = list(g.mixes)
        for m in self.members:
            new: list[Segment] = []
            for s in m.layout:
                if s.group == gid:
                    new += [Segment(a, 1, s.inner), Segment(b, 1, s.inner)]
                else:
                    new.append(s)
            m.layout[:] = new
        for v, (_axis, x) in list(self.created.items()):
            if x == gid:
                del self.created[v]
        del self.groups[gid]
        return True

    def factor_group(self, gid: int, outer: int) -> int:
        """Regard group ``gid`` as ``outer`` repeats of a smaller group; returns the new group."""
        g = self.groups[gid]
        new = self.new_group(g.size // outer, None, g.fixed)
        self.groups[new].producers = list(g.producers)
        self.groups[new].mixes = list(g.mixes)
        for m in self.members:
            m.layout[:] = [Segment(new, s.outer * outer, s.inner) if s.group == gid else s for s in m.layout]
        for v, (axis, x) in list(self.created.items()):
            if x == gid:
                self.created[v] = (axis, new)
        del self.groups[gid]
        return new

    # -- members -----------------------------------------------------------------------------
    def add(self, member: Member) -> Member:
        self.members.append(member)
        return member

    def set_layout(self, value: ir.Value, axis: int, layout: list[Segment]) -> None:
        rank = self.rank(value)
        if rank is not None:
            axis %= rank
        if axis in self.layouts.get(value, {}):
            old = self.layouts[value][axis]
            self.unify(old.layout, list(layout), value.producer() or self._anon())
            return
        m = self.add(Member("value", value, axis, list(layout), value.producer()))
        self.layouts.setdefault(value, {})[axis] = m

    def _anon(self) -> ir.Node:
        return ir.Node("", "Identity", [], name="<graph>")

    def tracked(self, value: ir.Value | None) -> dict[int, list[Segment]]:
        if value is None:
            return {}
        return {a: m.layout for a, m in self.layouts.get(value, {}).items()}

    def layout_of(self, value: ir.Value, axis: int, node: ir.Node) -> list[Segment] | None:
        """The layout of ``value``'s ``axis``; untracked runtime channels become a fixed group."""
        rank = self.rank(value)
        if rank is None:
            return None
        axis %= rank
        have = self.layouts.get(value, {}).get(axis)
        if have is not None:
            return have.layout
        dims = self.dims(value)
        if dims is None or dims[axis] is None:
            return None
        if value.is_graph_input():
            why = f"its channels come from graph input {value.name!r}"
        else:
            why = f"its channels come from {value.name!r}, which size analysis does not follow"
        gid = self.new_group(dims[axis], None, why)
        self.set_layout(value, axis, [Segment(gid)])
        return self.layouts[value][axis].layout

    def param(self, value: ir.Value, axis: int, layout: list[Segment], node: ir.Node, role: str) -> None:
        """Register a constant's ``axis`` as following ``layout`` (shared weights are unified)."""
        src = const_source(value)
        if src is not None:  # a Transpose/Identity view of a constant: edit the constant
            value, amap = src
            axis = amap[axis % len(amap)]
            if axis is None:  # an axis of size 1 the view inserted: nothing to slice
                return
        dims = self.dims(value)
        axis %= len(dims)
        key = (value, axis)
        if key in self.params:
            self.unify(self.params[key].layout, list(layout), node)
            return
        self.params[key] = self.add(Member("param", value, axis, list(layout), node, role))

    def rank(self, value: ir.Value) -> int | None:
        d = self.dims(value)
        return None if d is None else len(d)

    def dims(self, value: ir.Value | None) -> list[int | None] | None:
        arr = weight_array(value)
        if arr is not None:
            return list(arr.shape)
        return static_dims(value)

    def result(self) -> SizeGroups:
        for m in self.members:
            if m.kind.startswith("tmp"):
                continue
            for s in m.layout:
                g = self.groups[s.group]
                if not g.members or g.members[-1] is not m:
                    g.members.append(m)
        return SizeGroups(self.model, self.groups, self.created, self.layouts)


def channel_indices(a_groups: dict[int, Group], layout: list[Segment], keep: dict[int, np.ndarray]) -> np.ndarray:
    """Positions along an axis with ``layout`` that survive when group ``g`` keeps ``keep[g]``."""
    parts, pos = [], 0
    for s in layout:
        n = a_groups[s.group].size
        k = keep.get(s.group)
        if k is None:
            parts.append(np.arange(pos, pos + s.outer * n * s.inner))
        else:
            o = np.arange(s.outer)[:, None, None] * (n * s.inner)
            c = np.asarray(k, dtype=np.int64)[None, :, None] * s.inner
            i = np.arange(s.inner)[None, None, :]
            parts.append((pos + o + c + i).reshape(-1))
        pos += s.outer * n * s.inner
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)
