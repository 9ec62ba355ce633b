"""How each ONNX op ties the channel layouts of its inputs, outputs and parameters together.

Layer and normalisation rules are in :mod:`._rules_layers`; elementwise and shape rules here.
"""

from __future__ import annotations

from math import prod

import onnx_ir as ir

from . import _rules_layers  # noqa: F401  (registers the layer rules)
from ._model import const_array, label, static_dims, weight_array
from ._rule_base import RULES, _attr, _input, _ints, _opaque, _pass, rule
from .groups import Analysis, Member, Segment

__all__ = ["RULES", "visit"]


def visit(a: Analysis, node: ir.Node) -> None:
    """Apply the rule of ``node``'s op; an op without one fixes every group it reads."""
    fn = RULES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
    if fn is None:
        _opaque(a, node, f"node {label(node)} is an op size analysis does not follow")
        return
    fn(a, node)


@rule("DepthToSpace", "SpaceToDepth", "Einsum", "GatherElements", "GatherND",
      "ScatterND", "ScatterElements", "Compress", "NonZero", "TopK", "If", "Loop", "Scan")
def opaque(a: Analysis, node: ir.Node) -> None:
    _opaque(a, node, f"node {label(node)} ({node.op_type}) ties channels in ways a size edit cannot follow")


# -- elementwise --------------------------------------------------------------------------------------
UNARY = ("Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus",
         "Softsign", "Gelu", "Erf", "Exp", "Log", "Abs", "Neg", "Sqrt", "Reciprocal", "Identity", "Cast",
         "CastLike", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Mish", "ThresholdedRelu", "Not", "IsNaN",
         "IsInf", "Dropout", "Clip", "Shrink", "Swish", "Softmax", "LogSoftmax", "Hardmax", "CumSum", "Trilu")


@rule(*UNARY)
def unary(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    if node.op_type in ("Softmax", "LogSoftmax", "Hardmax", "CumSum") and a.tracked(x):
        r = a.rank(x) or 1
        axis = int(_attr(node, "axis", -1)) % r
        if axis in a.tracked(x):
            for s in a.tracked(x)[axis]:
                a.groups[s.group].mixes.append(label(node))
    _pass(a, x, node.outputs[0])


@rule("MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "MaxRoiPool")
def pool(a: Analysis, node: ir.Node) -> None:
    _pass(a, node.inputs[0], node.outputs[0], {0, 1})


ROLES = {"Add": "shift", "Sub": "shift", "Mul": "scale", "Div": "scale", "PRelu": "slope"}


@rule("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Mod", "PRelu", "BitShift", "BitwiseAnd",
      "BitwiseOr", "BitwiseXor")
def elementwise(a: Analysis, node: ir.Node) -> None:
    y = node.outputs[0]
    ins = [v for v in node.inputs if v is not None]
    ranks = [a.rank(v) for v in ins]
    ry = a.rank(y) or max((r for r in ranks if r is not None), default=0)
    if any(r is None for r in ranks):
        if any(a.tracked(v) for v in ins):
            _opaque(a, node, f"node {label(node)}: an input of unknown rank")
        return
    for k in range(ry):
        tracked, consts, others = [], [], []
        for v, r in zip(ins, ranks):
            ax = k - (ry - r)
            if ax < 0:
                continue
            d = a.dims(v)[ax]
            if ax in a.tracked(v):
                tracked.append((v, ax))
            elif d == 1 or d is None:
                continue
            elif weight_array(v) is not None:
                consts.append((v, ax))
            else:
                others.append((v, ax))
        if not tracked:
            continue
        v0, ax0 = tracked[0]
        for v, ax in tracked[1:] + others:
            lay = a.layout_of(v, ax, node)
            if lay is not None:
                a.unify(a.tracked(v0)[ax0], lay, node)
        for v, ax in consts:
            a.param(v, ax, a.tracked(v0)[ax0], node, ROLES.get(node.op_type, "const"))
        a.set_layout(y, k, a.tracked(v0)[ax0])


# -- shapes ---------------------------------------------------------------------------------------------
@rule("Transpose")
def transpose(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    r = a.rank(x)
    if r is None:
        _opaque(a, node, f"node {label(node)}: unknown rank")
        return
    perm = [int(p) for p in _attr(node, "perm", list(range(r))[::-1])]
    for ax, lay in list(a.tracked(x).items()):
        a.set_layout(node.outputs[0], perm.index(ax), lay)


@rule("Unsqueeze", "Squeeze")
def unsqueeze(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    rx, ry = a.rank(x), a.rank(y)
    axes = _ints(a, node, "axes", 1)
    if rx is None or ry is None:
        _opaque(a, node, f"node {label(node)}: unknown rank or axes")
        return
    if node.op_type == "Unsqueeze":
        if axes is None:
            _opaque(a, node, f"node {label(node)}: axes computed at run time")
            return
        inserted = {ax % ry for ax in axes}
        keep = [i for i in range(ry) if i not in inserted]
        mapping = dict(zip(range(rx), keep))
    else:
        dims = a.dims(x)
        removed = {ax % rx for ax in axes} if axes is not None else {i for i, d in enumerate(dims) if d == 1}
        keep = [i for i in range(rx) if i not in removed]
        mapping = {ax: j for j, ax in enumerate(keep)}
    for ax, lay in list(a.tracked(x).items()):
        if ax in mapping:
            a.set_layout(y, mapping[ax], lay)
        else:
            a.fix(lay, f"node {label(node)} drops a channel axis")


@rule("Flatten")
def flatten(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    dims = a.dims(x)
    if dims is None:
        _opaque(a, node, f"node {label(node)}: unknown input shape")
        return
    axis = int(_attr(node, "axis", 1)) % (len(dims) + 1)
    left = dims[:axis]
    out = [prod(left) if None not in left else None, prod(dims[axis:]) if None not in dims[axis:] else None]
    _reshape(a, node, x, node.outputs[0], dims, out, None)


@rule("Reshape")
def reshape(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    if not a.tracked(x):
        return
    target = const_array(node.inputs[1])
    dims, out = a.dims(x), a.dims(y)
    if dims is None:
        _opaque(a, node, f"Reshape {label(node)}: unknown shapes")
        return
    if target is not None:
        literal = [int(t) for t in target.reshape(-1)]
        refs = [(node.inputs[1], node, j) if t > 0 else None for j, t in enumerate(literal)]
    else:
        pieces = _concat_target(node.inputs[1])
        if pieces is None:
            _opaque(a, node, f"Reshape {label(node)}: its target shape is computed at run time")
            return
        literal = [t for t, _ in pieces]
        refs = [ref for _, ref in pieces]
    resolved = _resolve_target(dims, literal, int(_attr(node, "allowzero", 0)))
    if out is None or len(out) != len(resolved) or any(o is None for o in out):
        out = resolved if out is None or len(out) != len(resolved) else [
            o if o is not None else r for o, r in zip(out, resolved)]
    _reshape(a, node, x, y, dims, out, refs)


def _concat_target(value: ir.Value) -> list[tuple[int | None, tuple | None]] | None:
    """A Reshape target built by Concat of constants and run-time dims (``x.shape[0]``):
    per entry its literal (``None`` when computed) and where the literal lives."""
    node = value.producer()
    if node is None or node.op_type != "Concat" or node.domain not in ("", "ai.onnx"):
        return None
    out: list[tuple[int | None, tuple | None]] = []
    for v in node.inputs:
        arr = const_array(v)
        if arr is not None:
            out += [(int(t), (v, node, k) if t > 0 else None) for k, t in enumerate(arr.reshape(-1))]
            continue
        d = static_dims(v)
        if d is None or len(d) != 1 or d[0] is None:
            return None
        out += [(None, None)] * d[0]
    return out


def _resolve_target(dims: list[int | None], target: list[int | None], allowzero: int) -> list[int | None]:
    """Output dims of a Reshape: 0 copies the input dim, -1 is inferred where the rest is known."""
    out: list[int | None] = []
    for j, t in enumerate(target):
        if t == 0 and not allowzero:
            out.append(dims[j] if j < len(dims) else None)
        elif t is None or t < 0:
            out.append(None)
        else:
            out.append(t)
    if -1 in target and None not in dims:
        known = [o for j, o in enumerate(out) if target[j] != -1]
        if None not in known:
            total = prod(dims)
            out[target.index(-1)] = total // max(1, prod(known))
    return out


def _blocks(ind: list[int | None], outd: list[int | None]) -> list[tuple[list[int], list[int]]] | None:
    """Pair runs of input axes with runs of output axes of equal element count (1-dims alone)."""
    ins = [i for i, d in enumerate(ind) if d != 1]
    outs = [j for j, d in enumerate(outd) if d != 1]
    res: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(ins) and j < len(outs):
        if ind[ins[i]] is None or outd[outs[j]] is None:
            if ind[ins[i]] is None and outd[outs[j]] is None:
                res.append(([ins[i]], [outs[j]]))
                i, j = i + 1, j + 1
                continue
            return None
        bi, bj = [ins[i]], [outs[j]]
        pi, po = ind[ins[i]], outd[outs[j]]
        i, j = i + 1, j + 1
        while pi != po:
            if pi < po and i < len(ins) and ind[ins[i]] is not None:
                bi.append(ins[i])
                pi *= ind[ins[i]]
                i += 1
            elif po < pi and j < len(outs) and outd[outs[j]] is not None:
                bj.append(outs[j])
                po *= outd[outs[j]]
                j += 1
            else:
                return None
        res.append((bi, bj))
    if i != len(ins) or j != len(outs):
        return None
    return res


def _reshape(a: Analysis, node: ir.Node, x: ir.Value, y: ir.Value, ind: list, outd: list,
             refs: list[tuple | None] | None) -> None:
    blocks = _blocks(ind, outd)
    tracked = a.tracked(x)
    if blocks is None:
        _opaque(a, node, f"Reshape {label(node)}: cannot follow its axes")
        return
    covered = {i for bi, _ in blocks for i in bi}
    for ax, lay in list(tracked.items()):
        if ax not in covered:
            a.fix(lay, f"node {label(node)} drops a channel axis")

    def shape_entry(j: int) -> None:
        if refs is not None and j < len(refs) and refs[j] is not None:
            value, owner, k = refs[j]
            a.add(Member("shape", value, j, list(a.tracked(y)[j]), owner, entry=k))

    for bi, bj in blocks:
        hit = [ax for ax in bi if ax in tracked]
        if not hit:
            continue
        if len(bi) == 1 and len(bj) == 1:
            a.set_layout(y, bj[0], tracked[bi[0]])
            shape_entry(bj[0])
            continue
        if len(bj) == 1 and len(hit) == 1:
            t = hit[0]
            lay = tracked[t]
            pre = prod(ind[k] for k in bi if k < t)
            post = prod(ind[k] for k in bi if k > t)
            if pre == 1 or len(lay) == 1:
                a.set_layout(y, bj[0], [Segment(s.group, s.outer * pre, s.inner * post) for s in lay])
                shape_entry(bj[0])
                continue
        if len(bi) == 1 and len(tracked[bi[0]]) == 1:
            s = tracked[bi[0]][0]
            n = a.groups[s.group].size
            sizes = [outd[j] for j in bj]
            for k, j in enumerate(bj):
                pre, post = prod(sizes[:k]), prod(sizes[k + 1:])
                if post == s.inner and sizes[k] > 1 and pre % s.outer == 0 and pre // s.outer * sizes[k] == n:
                    h = pre // s.outer
                    gid = a.factor_group(s.group, h) if h > 1 else s.group
                    a.set_layout(y, j, [Segment(gid)])
                    shape_entry(j)
                    break
            else:
                a.fix(tracked[bi[0]], f"Reshape {label(node)} splits channels in a way that cannot be followed")
            continue
        for ax in hit:
            a.fix(tracked[ax], f"Reshape {label(node)} mixes a channel axis with others")


@rule("Expand")
def expand(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    target = const_array(_input(node, 1))
    rx, ry = a.rank(x), a.rank(y)
    if target is None or rx is None or ry is None:
        _opaque(a, node, f"Expand {label(node)}: its target shape is computed at run time")
        return
    for ax, lay in list(a.tracked(x).items()):
        j = ax + ry - rx
        a.set_layout(y, j, lay)
        if int(target.reshape(-1)[j - (ry - target.size)]) > 1 if j - (ry - target.size) >= 0 else False:
            a.add(Member("shape", node.inputs[1], j, list(lay), node, entry=j - (ry - target.size)))


@rule("Tile", "Pad")
def tile_pad(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    r = a.rank(x)
    if node.op_type == "Tile":
        reps = _ints(a, node, "repeats", 1)
        bad = None if reps is None else {i for i, k in enumerate(reps) if k != 1}
    else:
        pads = _ints(a, node, "pads", 1)
        axes = _ints(a, node, "__none__", 3) if len(node.inputs) > 3 else list(range(r or 0))
        bad = None if pads is None or axes is None else {
            axes[i] % (r or 1) for i in range(len(axes)) if pads[i] or pads[i + len(axes)]}
    for ax, lay in list(a.tracked(x).items()):
        if bad is None or ax in bad:
            a.fix(lay, f"node {label(node)} changes the size of a channel axis")
    _pass(a, x, node.outputs[0])


@rule("Resize", "Upsample")
def resize(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    sizes = const_array(_input(node, 3)) if node.op_type == "Resize" else None
    scales = const_array(_input(node, 2 if node.op_type == "Resize" else 1))
    for ax, lay in list(a.tracked(x).items()):
        if scales is not None and scales.size > ax and float(scales.reshape(-1)[ax]) != 1.0:
            a.fix(lay, f"node {label(node)} resizes a channel axis")
        a.set_layout(y, ax, lay)
        if sizes is not None and sizes.size > ax:
            a.add(Member("shape", node.inputs[3], ax, list(lay), node, entry=ax))
        elif sizes is None and _input(node, 3) is not None:
            a.fix(lay, f"node {label(node)}: sizes computed at run time")


@rule("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin")
def reduce(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    r = a.rank(x)
    if r is None or not a.tracked(x):
        return
    if node.op_type.startswith("Arg"):
        axes = [int(_attr(node, "axis", 0))]
    else:
        axes = _ints(a, node, "axes", 1)
        if axes is None and _input(node, 1) is not None:
            _opaque(a, node, f"node {label(node)}: axes computed at run time")
            return
        if axes is None:
            axes = [] if int(_attr(node, "noop_with_empty_axes", 0)) else list(range(r))
    reduced = {ax % r for ax in axes}
    keepdims = int(_attr(node, "keepdims", 1))
    for ax, lay in list(a.tracked(x).items()):
        if ax in reduced:
            for s in lay:
                a.groups[s.group].mixes.append(label(node))
            continue
        a.set_layout(y, ax if keepdims else ax - sum(1 for k in reduced if k < ax), lay)


@rule("Shape", "Size", "Constant", "ConstantOfShape", "Range", "EyeLike", "RandomNormalLike", "RandomUniformLike")
def no_channels(a: Analysis, node: ir.Node) -> None:
    """The output carries no channels: a shape, a size or a fresh tensor."""


@rule("Concat")
def concat(a: Analysis, node: ir.Node) -> None:
    y = node.outputs[0]
    ins = [v for v in node.inputs if v is not None]
    r = a.rank(y)
    if r is None:
        if any(a.tracked(v) for v in ins):
            _opaque(a, node, f"node {label(node)}: unknown rank")
        return
    axis = int(_attr(node, "axis", 0)) % r
    for k in range(r):
        hit = [v for v in ins if k in a.tracked(v)]
        if not hit:
            continue
        if k != axis:
            for v in hit[1:]:
                a.unify(a.tracked(hit[0])[k], a.tracked(v)[k], node)
            a.set_layout(y, k, a.tracked(hit[0])[k])
            continue
        parts = [a.layout_of(v, k, node) for v in ins]
        if any(p is None for p in parts):
            for p in parts:
                if p is not None:
                    a.fix(p, f"Concat {label(node)}: an input of unknown size")
            continue
        a.set_layout(y, k, [s for v in ins for s in a.tracked(v)[k]])


@rule("Split")
def split(a: Analysis, node: ir.Node) -> None:
    x = node.inputs[0]
    r = a.rank(x)
    if r is None or not a.tracked(x):
        return
    axis = int(_attr(node, "axis", 0)) % r
    for ax, lay in list(a.tracked(x).items()):
        if ax != axis:
            for out in node.outputs:
                a.set_layout(out, ax, lay)
    if axis not in a.tracked(x):
        return
    sizes = [a.dims(o)[axis] if a.dims(o) else None for o in node.outputs]
    if None in sizes:
        a.fix(a.tracked(x)[axis], f"Split {label(node)}: output sizes unknown")
        return
    tmp = a.add(Member("tmp", x, axis, list(a.tracked(x)[axis])))
    cuts = [sum(sizes[: i + 1]) for i in range(len(sizes) - 1)]
    ok = a.refine(tmp, cuts, node)
    a.members.remove(tmp)
    if not ok:
        a.fix(a.tracked(x)[axis], f"Split {label(node)} cuts through a group that cannot be divided")
        return
    pos, k, lay = 0, 0, a.tracked(x)[axis]
    for i, out in enumerate(node.outputs):
        part: list[Segment] = []
        while k < len(lay) and pos < sum(sizes[: i + 1]):
            part.append(lay[k])
            pos += a.seg_size(lay[k])
            k += 1
        if part:
            a.set_layout(out, axis, part)
        a.add(Member("split", x, axis, list(part), node, entry=i))


@rule("Slice")
def slice_(a: Analysis, node: ir.Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    r, dims = a.rank(x), a.dims(x)
    if r is None or not a.tracked(x):
        return
    starts, ends = _ints(a, node, "starts", 1), _ints(a, node, "ends", 2)
    axes = _ints(a, node, "axes", 3) if ("axes" in node.attributes or _input(node, 3) is not None) else None
    steps = _ints(a, node, "__none__", 4) if _input(node, 4) is not None else None
    if starts is None or ends is None or (axes is None and ("axes" in node.attributes or _input(node, 3))):
        _opaque(a, node, f"Slice {label(node)}: its range is computed at run time")
        return
    axes = [ax % r for ax in (axes if axes is not None else range(len(starts)))]
    steps = steps or [1] * len(axes)
    for ax, lay in list(a.tracked(x).items()):
        if ax not in axes:
            a.set_layout(y, ax, lay)
            continue
        e = axes.index(ax)
        n = dims[ax]
        if steps[e] != 1 or n is None:
            a.fix(lay, f"Slice {label(node)} takes strided or unknown channels")
            continue
        s0 = max(0, min(n, starts[e] + n if starts[e] < 0 else starts[e]))
        e0 = max(0, min(n, ends[e] + n if ends[e] < 0 else ends[e]))
        tmp = a.add(Member("tmp", x, ax, list(lay)))
        ok = a.refine(tmp, [s0, e0], node)
        a.members.remove(tmp)
        if not ok or e0 <= s0:
            a.fix(a.tracked(x)[ax], f"Slice {label(node)} cuts through a group that cannot be divided")
            continue
        lay = a.tracked(x)[ax]
        before, kept, pos = [], [], 0
        for s in lay:
            if pos < s0:
                before.append(s)
            elif pos < e0:
                kept.append(s)
            pos += a.seg_size(s)
        b = a.add(Member("tmp_before", x, ax, before, node))
        a.add(Member("slice", x, ax, list(kept), node, entry=e, before=b))
        a.set_layout(y, ax, kept)
