"""Size rules of the layers that create or normalise channels: convolutions, Gemm/MatMul, norms."""

from __future__ import annotations

import onnx_ir as ir

from ._model import label, weight_array
from ._rule_base import _attr, _input, _opaque, _pass, rule
from .groups import Analysis, Member, Segment


# -- layers that create channels -------------------------------------------------------------------
@rule("Conv", "ConvTranspose")
def conv(a: Analysis, node: ir.Node) -> None:
    x, w, b, y = node.inputs[0], node.inputs[1], _input(node, 2), node.outputs[0]
    warr = weight_array(w)
    if warr is None or warr.ndim < 3:
        _opaque(a, node, f"node {label(node)} computes its weight at run time")
        return
    transpose = node.op_type == "ConvTranspose"
    g = int(_attr(node, "group", 1))
    in_axis, out_axis = (0, 1) if transpose else (1, 0)
    n_out = warr.shape[out_axis] * (g if transpose else 1)
    lin = a.layout_of(x, 1, node)
    name = node.name or label(node)
    if g == 1:
        if lin is not None:
            a.param(w, in_axis, lin, node, "in")
        gid = a.new_group(n_out, name)
        a.set_layout(y, 1, [Segment(gid)])
        a.created[y] = (1, gid)
        a.param(w, out_axis, a.tracked(y)[1], node, "weight")
        if weight_array(b) is not None:
            a.param(b, 0, a.tracked(y)[1], node, "bias")
        return
    cin = a.dims(x)[1] if a.dims(x) else None
    if lin is not None and warr.shape[1] == 1 and n_out == g == cin:
        a.param(w, 0, lin, node, "depthwise")
        a.add(Member("group", w, 0, list(a.tracked(x)[1]), node))
        if weight_array(b) is not None:
            a.param(b, 0, a.tracked(x)[1], node, "bias")
        a.set_layout(y, 1, a.tracked(x)[1])
        return
    per_in = warr.shape[in_axis] // (g if transpose else 1)  # input channels of one group
    blocked = _grouped(a, lin, g, per_in) if lin is not None else None
    if blocked is not None:
        # every group loses the same local channels: the input and output layouts are
        # ``g`` repeats of one smaller group, and ``group`` itself does not change
        a.param(w, in_axis, [Segment(blocked.group, g if transpose else 1, blocked.inner)], node, "in")
        gid = a.new_group(n_out // g, name)
        a.set_layout(y, 1, [Segment(gid, g)])
        a.created[y] = (1, gid)
        a.param(w, out_axis, [Segment(gid, 1 if transpose else g)], node, "weight")
        if weight_array(b) is not None:
            a.param(b, 0, [Segment(gid, g)], node, "bias")
        return
    reason = f"grouped convolution {label(node)} (group={g}) keeps its channel counts"
    if lin is not None:
        a.fix(lin, reason)
    gid = a.new_group(n_out, name, reason)
    a.set_layout(y, 1, [Segment(gid)])
    a.created[y] = (1, gid)


def _grouped(a: Analysis, layout: list[Segment], g: int, per_group: int) -> Segment | None:
    """``layout`` (one free channel group) seen as ``g`` repeats of a group of ``per_group`` channels.

    Returns the one segment of the refactored layout (``outer == g``), or None where the layout
    cannot be split that way (several groups, a repeated group, a group of one channel per block).
    """
    if len(layout) != 1 or per_group < 2:
        return None
    s = layout[0]
    if s.inner != 1 or a.groups[s.group].fixed:
        return None
    if s.outer == g and a.groups[s.group].size == per_group:  # already blocked the same way
        return s
    if s.outer != 1 or a.groups[s.group].size != g * per_group:
        return None
    gid = a.factor_group(s.group, g)
    return Segment(gid, g, 1)


@rule("Gemm")
def gemm(a: Analysis, node: ir.Node) -> None:
    x, w, c, y = node.inputs[0], node.inputs[1], _input(node, 2), node.outputs[0]
    warr = weight_array(w)
    ta, tb = int(_attr(node, "transA", 0)), int(_attr(node, "transB", 0))
    if warr is None or warr.ndim != 2 or weight_array(x) is not None:
        _opaque(a, node, f"node {label(node)} multiplies two run-time values")
        return
    lin = a.layout_of(x, 0 if ta else 1, node)
    if lin is not None:
        a.param(w, 1 if tb else 0, lin, node, "in")
    n = warr.shape[0 if tb else 1]
    gid = a.new_group(n, node.name or label(node))
    a.set_layout(y, 1, [Segment(gid)])
    a.created[y] = (1, gid)
    a.param(w, 0 if tb else 1, a.tracked(y)[1], node, "weight")
    carr = weight_array(c)
    if carr is not None and carr.ndim >= 1 and carr.shape[-1] == n and n > 1:
        a.param(c, carr.ndim - 1, a.tracked(y)[1], node, "bias")
    elif c is not None and carr is None and a.tracked(c):
        lay = a.layout_of(c, -1, node)
        if lay is not None:
            a.unify(a.tracked(y)[1], lay, node)
    if not ta and 0 in a.tracked(x):
        a.set_layout(y, 0, a.tracked(x)[0])


@rule("MatMul")
def matmul(a: Analysis, node: ir.Node) -> None:
    x, w, y = node.inputs[0], node.inputs[1], node.outputs[0]
    xarr, warr = weight_array(x), weight_array(w)
    rx, rw, ry = a.rank(x), a.rank(w), a.rank(y)
    if rx is None or rw is None or ry is None or rx < 2 or rw < 2:
        _opaque(a, node, f"node {label(node)}: MatMul of unknown or 1-D ranks")
        return
    if warr is not None and xarr is None and warr.ndim == 2:
        lin = a.layout_of(x, -1, node)
        if lin is not None:
            a.param(w, 0, lin, node, "in")
        gid = a.new_group(warr.shape[1], node.name or label(node))
        a.set_layout(y, ry - 1, [Segment(gid)])
        a.created[y] = (ry - 1, gid)
        a.param(w, 1, a.tracked(y)[ry - 1], node, "weight")
        for ax, lay in list(a.tracked(x).items()):
            if ax < rx - 1:
                a.set_layout(y, ax + ry - rx, lay)
        return
    if warr is None and xarr is None:
        if rx - 1 in a.tracked(x) or rw - 2 in a.tracked(w):
            la, lb = a.layout_of(x, -1, node), a.layout_of(w, -2, node)
            if la is not None and lb is not None:
                for seg in a.unify(la, lb, node):  # contracted without a weight to zero or split
                    a.groups[seg.group].mixes.append(label(node))
        if rw - 1 in a.tracked(w):
            a.set_layout(y, ry - 1, a.tracked(w)[rw - 1])
        if rx - 2 in a.tracked(x):
            a.set_layout(y, ry - 2, a.tracked(x)[rx - 2])
        for v, r in ((x, rx), (w, rw)):
            for ax, lay in list(a.tracked(v).items()):
                if ax < r - 2:
                    a.set_layout(y, ax + ry - r, lay)
        return
    _opaque(a, node, f"node {label(node)}: MatMul with a constant left operand")


@rule("Gather")
def gather(a: Analysis, node: ir.Node) -> None:
    data, idx, y = node.inputs[0], node.inputs[1], node.outputs[0]
    axis = int(_attr(node, "axis", 0))
    rd, ri = a.rank(data), a.rank(idx)
    if rd is None or ri is None:
        _opaque(a, node, f"node {label(node)}: Gather of unknown rank")
        return
    axis %= rd
    darr = weight_array(data)
    if darr is not None and darr.ndim == 2 and axis == 0 and weight_array(idx) is None:
        gid = a.new_group(darr.shape[1], node.name or label(node))  # an embedding table
        a.set_layout(y, ri, [Segment(gid)])
        a.created[y] = (ri, gid)
        a.param(data, 1, a.tracked(y)[ri], node, "weight")
        return
    for ax, lay in list(a.tracked(data).items()):
        if ax == axis:
            a.fix(lay, f"Gather {label(node)} picks channels by index")
        else:
            a.set_layout(y, ax if ax < axis else ax + ri - 1, lay)
    for layout in a.tracked(idx).values():
        a.fix(layout, f"node {label(node)} uses channel values as indices")


# -- normalisation ----------------------------------------------------------------------------------
@rule("BatchNormalization", "InstanceNormalization")
def batchnorm(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    lin = a.layout_of(x, 1, node) if (a.rank(x) or 0) >= 2 else None
    roles = ["scale", "shift", "mean", "var"]
    if lin is not None:
        for i, role in enumerate(roles[: len(node.inputs) - 1], start=1):
            v = node.inputs[i]
            if v is None:
                continue
            if weight_array(v) is None:
                a.fix(lin, f"node {label(node)} computes its {role} at run time")
                continue
            a.param(v, 0, a.tracked(x)[1], node, role)
    _pass(a, x, node.outputs[0])


@rule("LayerNormalization")
def layernorm(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    r = a.rank(x)
    if r is None:
        _opaque(a, node, f"node {label(node)}: unknown rank")
        return
    axis = int(_attr(node, "axis", -1)) % r
    scale = a.dims(_input(node, 1)) or []
    for ax in range(axis, r):
        pax = ax - (r - len(scale))
        if pax >= 0 and scale[pax] not in (None, 1):
            a.layout_of(x, ax, node)  # the normalised axes are channels even when x comes from outside
    for ax, lay in list(a.tracked(x).items()):
        if ax < axis:
            continue
        a.groups[lay[0].group].mixes.append(label(node)) if lay else None
        for i, role in ((1, "scale"), (2, "shift")):
            v = _input(node, i)
            d = a.dims(v)
            if v is None or d is None:
                continue
            pax = ax - (r - len(d))
            if pax >= 0 and d[pax] not in (None, 1):
                if weight_array(v) is None:
                    a.fix(lay, f"node {label(node)} computes its {role} at run time")
                else:
                    a.param(v, pax, lay, node, role)
    _pass(a, x, node.outputs[0])


def _same_shape(x: ir.Value, y: ir.Value) -> None:
    """Give a shape-preserving op's output its input's shape where inference left it unknown."""
    if y.shape is None and x.shape is not None:
        y.shape = x.shape


@rule("LRN")
def lrn(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    _same_shape(x, node.outputs[0])
    if 1 in a.tracked(x):
        for s in a.tracked(x)[1]:
            a.groups[s.group].mixes.append(label(node))  # each channel reads its neighbours
    _pass(a, x, node.outputs[0])


@rule("GroupNormalization")
def groupnorm(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    _same_shape(x, y)
    g = int(_attr(node, "num_groups", 1))
    dims = a.dims(x)
    c = dims[1] if dims and len(dims) > 1 else None
    lin = a.layout_of(x, 1, node) if c is not None else None
    if lin is None or c is None or c % g:
        _opaque(a, node, f"node {label(node)} (GroupNormalization) has unknown channels")
        return
    seg = _grouped(a, lin, g, c // g) if g > 1 else (lin[0] if len(lin) == 1 else None)
    if seg is None:
        a.fix(lin, f"GroupNormalization {label(node)} (num_groups={g}) keeps its channel count")
        _pass(a, x, y)
        return
    lay = [seg]
    a.groups[seg.group].mixes.append(label(node))  # statistics over each group's channels
    for i, role in ((1, "scale"), (2, "shift")):
        v = _input(node, i)
        d = a.dims(v)
        if v is None or d is None or len(d) != 1 or d[0] != c:
            continue  # opset 18: one scale/bias per group, which pruning leaves as they are
        if weight_array(v) is None:
            a.fix(lay, f"node {label(node)} computes its {role} at run time")
            continue
        a.param(v, 0, lay, node, role)
    a.set_layout(y, 1, lay)
    _pass(a, x, y, {0})
