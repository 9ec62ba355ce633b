"""Pattern fusion: decomposed layers in an exported ONNX graph become the ONNX op that names them.

A framework that has no layer-level ops in its traces (JAX's jaxprs hold ``reduce_sum``, ``rsqrt``,
``dot_general`` ...) exports a layer norm as a dozen elementwise nodes. :func:`fuse_patterns`
finds those forms in any exported graph (framework-free: it reads ONNX nodes only) and rewrites
them, where the model's opset has the op:

- layer norm -> ``LayerNormalization`` (opset 17+): ``(x - mean(x)) * rsqrt(var(x) + eps)``
  [``* scale``] [``+ bias``] over trailing axes, the variance written as ``mean((x - m)^2)`` or
  ``max(0, mean(x^2) - m^2)`` (Flax), the mean as ``ReduceMean`` or ``ReduceSum / n``, the
  inverse square root as ``Reciprocal(Sqrt)``, ``1 / Sqrt`` or ``Pow(-0.5)``;
- inference batch norm -> ``BatchNormalization`` (opset 15+): ``(x - mean) * (rsqrt(var + eps)
  [* scale]) [+ bias]`` with per-channel statistics (axis 1; channels-last layers reach this
  form once their Transposes moved) that Reshape nodes broadcast;
- softmax -> ``Softmax`` (opset 13+): ``exp(z - m) / sum(exp(z - m))`` along one axis, ``m``
  (the max JAX subtracts for stability) constant along it, so that the result is ``softmax(z)``;
- GELU -> ``Gelu`` (opset 20+): ``x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))``
  (``approximate="tanh"``), ``x * 0.5 * (1 + erf(x / sqrt(2)))`` and JAX's
  ``0.5 x * erfc(-x / sqrt(2))`` (written ``1 - erf``);
- a 2-D ``MatMul`` plus a bias read by nothing else -> ``Gemm``;
- scaled dot-product attention -> ``Attention`` (opset 23+; :mod:`onnxport.exporting.fusions.patterns_attention`);
- a Loop whose body is an LSTM step -> ``LSTM`` (:mod:`onnxport.exporting.fusions.patterns_lstm`).

Numerics: the fused ops compute the same function; a layer norm's variance is computed as
``mean((x - m)^2)``, which equals the ``mean(x^2) - m^2`` form up to float rounding (the form
with ``max(0, ...)`` only differs where rounding made it negative).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
import onnx_ir as ir

from .pattern_match import (
    _const,
    _dims,
    _is,
    _names,
    _node,
    _other,
    _peel,
    _Rewriter,
    _scalar,
    _sole_use,
)
from .patterns_attention import fuse_attention
from .patterns_lstm import fuse_lstm


def _reduce_axes(node: ir.Node, rank: int) -> tuple[int, ...] | None:
    if len(node.inputs) > 1 and node.inputs[1] is not None:
        a = _const(node.inputs[1])
        if a is None:
            return None
        axes = a.reshape(-1).tolist()
    else:
        attr = node.attributes.get("axes")
        axes = list(attr.value) if attr is not None else list(range(rank))
    return tuple(sorted(int(x) % rank - rank for x in axes))


def _mean(v: ir.Value) -> tuple[ir.Value, tuple[int, ...]] | None:
    """``(x, axes)`` (negative, sorted) when ``v`` is the mean of ``x`` over ``axes``."""
    v = _peel(v)
    if (n := _node(v, "ReduceMean")) is not None:
        x = n.inputs[0]
        if x.shape is None:
            return None
        return x, _reduce_axes(n, len(x.shape)) or None
    n = _node(v, {"Div", "Mul"})
    if n is None or (s := _node(_peel(n.inputs[0]), "ReduceSum")) is None:
        return None
    x = s.inputs[0]
    if x.shape is None or (axes := _reduce_axes(s, len(x.shape))) is None:
        return None
    sizes = [x.shape[a] for a in axes]
    if not all(isinstance(d, int) for d in sizes):
        return None
    count = float(np.prod(sizes))
    if _is(n.inputs[1], count if n.op_type == "Div" else 1.0 / count):
        return x, axes
    return None


def _square_of(v: ir.Value) -> ir.Value | None:
    """``x`` when ``v`` is ``x * x`` or ``x ** 2``."""
    if (n := _node(v, "Mul")) is not None and n.inputs[0] is n.inputs[1]:
        return n.inputs[0]
    if (n := _node(v, "Pow")) is not None and _is(n.inputs[1], 2.0):
        return n.inputs[0]
    return None


def _is_variance(v: ir.Value, x: ir.Value, axes: tuple[int, ...]) -> bool:
    """Whether ``v`` is the (population) variance of ``x`` over ``axes``."""
    v = _peel(v)
    if (n := _node(v, "Max")) is not None:  # max(0, E[x^2] - E[x]^2)
        for a, b in ((0, 1), (1, 0)):
            if _is(n.inputs[a], 0.0):
                v = _peel(n.inputs[b])
                break
        else:
            return False
    m = _mean(v)
    if m is not None and m[1] == axes:  # mean((x - mean(x))^2)
        d = _square_of(m[0])
        if d is not None and (s := _node(d, "Sub")) is not None and s.inputs[0] is x:
            inner = _mean(s.inputs[1])
            return inner is not None and inner == (x, axes)
        return False
    if (s := _node(v, "Sub")) is None:  # E[x^2] - E[x]^2
        return False
    sq = _mean(s.inputs[0])
    mm = _square_of(_peel(s.inputs[1]))
    return (sq is not None and sq[1] == axes and _square_of(sq[0]) is x
            and mm is not None and _mean(mm) == (x, axes))


def _inv_std(v: ir.Value) -> tuple[ir.Value, float] | None:
    """``(variance, eps)`` when ``v`` is ``1 / sqrt(variance + eps)``."""
    if (n := _node(v, "Reciprocal")) is not None:
        s = _node(n.inputs[0], "Sqrt")
        inner = s.inputs[0] if s is not None else None
    elif (n := _node(v, "Div")) is not None and _is(n.inputs[0], 1.0):
        s = _node(n.inputs[1], "Sqrt")
        inner = s.inputs[0] if s is not None else None
    elif (n := _node(v, "Pow")) is not None and _is(n.inputs[1], -0.5):
        inner = n.inputs[0]
    else:
        return None
    add = _node(_peel(inner), "Add") if inner is not None else None
    if add is None:
        return None
    for a, b in ((0, 1), (1, 0)):
        eps = _scalar(add.inputs[b])
        if eps is not None:
            return add.inputs[a], eps
    return None


def _fuse_layernorm(rw: _Rewriter) -> int:
    count = 0
    for sub in list(rw.graph):
        if sub.op_type != "Sub" or sub.domain or sub.graph is None:
            continue
        x, d = sub.inputs[0], sub.outputs[0]
        m = _mean(sub.inputs[1])
        if x is None or m is None or m[0] is not x or x.shape is None:
            continue
        axes = m[1]
        rank = len(x.shape)
        if axes != tuple(range(-len(axes), 0)):
            continue
        normalized = list(x.shape)[rank - len(axes):]
        kept = list(x.shape)[:rank - len(axes)] + [1] * len(axes)  # how mean and variance broadcast
        if not all(isinstance(s, int) for s in normalized) or _dims(sub.inputs[1]) != kept:
            continue
        for use in list(d.uses()):
            mul = use.node
            if mul.op_type not in ("Mul", "Div") or mul.domain or mul.graph is not rw.graph:
                continue
            r = _other(mul, d) if mul.op_type == "Mul" else mul.inputs[1]
            if r is None or (mul.op_type == "Div" and mul.inputs[0] is not d):
                continue
            scale = None
            if mul.op_type == "Div":  # (x - m) / sqrt(var + eps)
                s = _node(r, "Sqrt")
                add = _node(_peel(s.inputs[0]), "Add") if s is not None else None
                inv = None
                if add is not None:
                    for a, b in ((0, 1), (1, 0)):
                        if (e := _scalar(add.inputs[b])) is not None:
                            inv = (add.inputs[a], e)
            else:
                inv = _inv_std(r)
                if inv is None and (rm := _node(r, "Mul")) is not None:  # rsqrt(...) * scale
                    for a, b in ((0, 1), (1, 0)):
                        if (inv := _inv_std(rm.inputs[a])) is not None:
                            scale = rm.inputs[b]
                            break
            if inv is None or _dims(inv[0]) not in (kept, kept[:-len(axes)]) or not _is_variance(inv[0], x, axes):
                continue
            last, bias = mul, None
            nxt = _sole_use(last.outputs[0])
            if scale is None and nxt is not None and nxt.op_type == "Mul" and not nxt.domain:
                cand = _other(nxt, last.outputs[0])
                if cand is not None and rw.param(cand, normalized) is not None:
                    scale, last = cand, nxt
                    nxt = _sole_use(last.outputs[0])
            if nxt is not None and nxt.op_type == "Add" and not nxt.domain:
                cand = _other(nxt, last.outputs[0])
                if cand is not None and rw.param(cand, normalized) is not None:
                    bias, last = cand, nxt
            dtype = x.dtype
            if scale is not None:
                scale = rw.param(scale, normalized)
            else:
                scale = rw.initializer("layer_norm_scale", np.ones(normalized, dtype=dtype.numpy()))
            if bias is not None:
                bias = rw.param(bias, normalized)
            if scale is None or scale.dtype != dtype or (bias is not None and bias.dtype != dtype):
                continue
            if last.outputs[0].shape is not None and list(last.outputs[0].shape) != list(x.shape):
                continue
            rw.replace(last, "LayerNormalization", [x, scale, bias] if bias is not None else [x, scale],
                       axis=-len(axes), epsilon=float(inv[1]))
            count += 1
            break
    return count


def _fuse_batchnorm(rw: _Rewriter) -> int:
    """``(x - mean) * (rsqrt(var + eps) [* scale]) [+ bias]`` with per-channel (axis 1) statistics
    that are no computation of ``x`` -> inference ``BatchNormalization``."""
    count = 0
    for sub in list(rw.graph):
        if sub.op_type != "Sub" or sub.domain or sub.graph is None:
            continue
        x, d = sub.inputs[0], sub.outputs[0]
        shape = _dims(d)  # x's shape (x may be unannotated): the statistics broadcast to it
        if x is None or shape is None or len(shape) < 2 or not isinstance(shape[1], int):
            continue
        if x.shape is not None and _dims(x) != shape:
            continue
        c = shape[1]
        per_channel = [1, c] + [1] * (len(shape) - 2)
        if _dims(sub.inputs[1]) != per_channel:
            continue
        mean = rw.param(sub.inputs[1], [c], reshape_only=True)
        if mean is None or _mean(sub.inputs[1]) is not None:
            continue
        for use in list(d.uses()):
            mul = use.node
            if mul.op_type != "Mul" or mul.domain or mul.graph is not rw.graph:
                continue
            r = _other(mul, d)
            if r is None or _dims(r) != per_channel:
                continue
            scale, inv = None, _inv_std(_peel(r))
            if inv is None and (rm := _node(_peel(r), "Mul")) is not None:
                for a, b in ((0, 1), (1, 0)):
                    if (inv := _inv_std(rm.inputs[a])) is not None:
                        scale = rw.param(rm.inputs[b], [c], reshape_only=True)
                        if scale is None:
                            inv = None
                        break
            if inv is None:
                continue
            var = rw.param(inv[0], [c], reshape_only=True)
            if var is None:
                continue
            last, bias = mul, None
            nxt = _sole_use(last.outputs[0])
            if nxt is not None and nxt.op_type == "Add" and not nxt.domain:
                cand = _other(nxt, last.outputs[0])
                if cand is not None and _dims(cand) == per_channel:
                    bias = rw.param(cand, [c], reshape_only=True)
                    if bias is not None:
                        last = nxt
            dtype = d.dtype
            if scale is None:
                scale = rw.initializer("batch_norm_scale", np.ones([c], dtype=dtype.numpy()))
            if bias is None:
                bias = rw.initializer("batch_norm_bias", np.zeros([c], dtype=dtype.numpy()))
            if any(v.dtype != dtype for v in (scale, bias, mean, var)):
                continue
            rw.replace(last, "BatchNormalization", [x, scale, bias, mean, var], epsilon=float(inv[1]))
            count += 1
            break
    return count


def _fuse_softmax(rw: _Rewriter) -> int:
    """``exp(z - m) / sum(exp(z - m), axis)`` (``m`` constant along ``axis``: the max that keeps it
    stable, broadcast) or ``exp(z) / sum(...)`` -> ``Softmax(z, axis)``: equal for any such ``m``."""
    count = 0
    for div in list(rw.graph):
        if div.op_type != "Div" or div.domain or div.graph is None:
            continue
        e, total = div.inputs
        ex = _node(e, "Exp")
        red = _node(_peel(total), "ReduceSum") if total is not None else None
        if ex is None or red is None or red.inputs[0] is not e or e.shape is None:
            continue
        rank = len(e.shape)
        axes = _reduce_axes(red, rank)
        if axes is None or len(axes) != 1:
            continue
        axis = axes[0] + rank
        kept = list(e.shape)
        kept[axis] = 1
        if _dims(total) != kept or _dims(div.outputs[0]) != list(e.shape):
            continue
        z = ex.inputs[0]
        if (sub := _node(z, "Sub")) is not None:
            m = sub.inputs[1]
            dims = _dims(m)
            if dims is None or (len(dims) == rank and dims[axis] != 1) or (
                    len(dims) > rank) or (len(dims) > rank - axis - 1 and dims[axis - rank] != 1):
                continue  # not constant along the axis
            z = sub.inputs[0]
        if _dims(z) != list(e.shape):
            continue
        rw.replace(div, "Softmax", [z], axis=axis)
        count += 1
    return count


def _gelu_input(t: ir.Value) -> tuple[ir.Value, str] | None:
    """``(x, approximate)`` when ``t`` is ``tanh(k (x + c x^3))`` or ``erf(x / sqrt 2)``
    (``approximate`` is ``"erfc"`` for ``erf(-x / sqrt 2)``, read as ``1 - t``)."""
    if (n := _node(t, "Tanh")) is not None:
        mul = _node(n.inputs[0], "Mul")
        if mul is None:
            return None
        for a, b in ((0, 1), (1, 0)):
            if _is(mul.inputs[a], math.sqrt(2 / math.pi)):
                add = _node(mul.inputs[b], "Add")
                break
        else:
            return None
        if add is None:
            return None
        for a, b in ((0, 1), (1, 0)):
            x, cm = add.inputs[a], _node(add.inputs[b], "Mul")
            if cm is None:
                continue
            for p, q in ((0, 1), (1, 0)):
                if _is(cm.inputs[p], 0.044715) and _cube_of(cm.inputs[q]) is x:
                    return x, "tanh"
        return None
    if (n := _node(t, "Erf")) is not None:
        inner = _node(n.inputs[0], {"Mul", "Div"})
        if inner is None:
            return None
        arg = None
        if inner.op_type == "Div" and _is(inner.inputs[1], math.sqrt(2)):
            arg = inner.inputs[0]
        for a, b in ((0, 1), (1, 0)):
            if inner.op_type == "Mul" and _is(inner.inputs[b], 1 / math.sqrt(2)):
                arg = inner.inputs[a]
        if arg is not None and (neg := _node(arg, "Neg")) is not None:
            return neg.inputs[0], "erfc"  # erfc(-x / sqrt 2) = 1 + erf(x / sqrt 2)
        if arg is not None:
            return arg, "none"
    return None


def _cube_of(v: ir.Value) -> ir.Value | None:
    if (n := _node(v, "Pow")) is not None and _is(n.inputs[1], 3.0):
        return n.inputs[0]
    if (n := _node(v, "Mul")) is not None:
        for a, b in ((0, 1), (1, 0)):
            if _square_of(n.inputs[a]) is n.inputs[b]:
                return n.inputs[b]
    return None


def _fuse_gelu(rw: _Rewriter) -> int:
    """``x * (0.5 * (1 + t))`` and ``(x * 0.5) * (1 + t)`` with ``t`` from :func:`_gelu_input`."""
    count = 0
    for node in list(rw.graph):
        if node.op_type not in ("Tanh", "Erf") or node.domain or node.graph is None:
            continue
        found = _gelu_input(node.outputs[0])
        if found is None:
            continue
        x, approx = found
        add = _sole_use(node.outputs[0])
        if approx == "erfc":  # 1 - erf(-x / sqrt 2)
            approx = "none"
            if add is None or add.op_type != "Sub" or add.inputs[1] is not node.outputs[0] or not _is(
                    add.inputs[0], 1.0):
                continue
        elif add is None or add.op_type != "Add" or not _is(_other(add, node.outputs[0]), 1.0):
            continue
        half = _sole_use(add.outputs[0])
        if half is None or half.op_type != "Mul":
            continue
        h = _other(half, add.outputs[0])
        if _is(h, 0.5):  # 0.5 * (1 + t), then * x
            last = _sole_use(half.outputs[0])
            if last is None or last.op_type != "Mul" or _other(last, half.outputs[0]) is not x:
                continue
        elif (hx := _node(h, "Mul")) is not None and {id(i) for i in hx.inputs} >= {id(x)} and (
                _is(_other(hx, x), 0.5)):  # (x * 0.5) * (1 + t)
            last = half
        else:
            continue
        rw.replace(last, "Gelu", [x], approximate=approx)
        count += 1
    return count


def _fuse_gemm(rw: _Rewriter) -> int:
    count = 0
    for mm in list(rw.graph):
        if mm.op_type != "MatMul" or mm.domain or mm.graph is None:
            continue
        a, b = mm.inputs
        if _dims(a) is None or _dims(b) is None or len(a.shape) != 2 or len(b.shape) != 2:
            continue
        add = _sole_use(mm.outputs[0])
        if add is None or add.op_type != "Add" or add.domain:
            continue
        c = _other(add, mm.outputs[0])
        n = b.shape[1]
        if c is None or c is mm.outputs[0] or c.shape is None or list(c.shape) not in ([n], [1, n]):
            continue
        if c.dtype != a.dtype or a.dtype not in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16,
                                                   ir.DataType.BFLOAT16):
            continue
        rw.replace(add, "Gemm", [a, b, c])
        count += 1
    return count


#: (name, the oldest opset with the op, the fusion)
FUSIONS: list[tuple[str, int, Callable[[_Rewriter], int]]] = [
    ("LayerNormalization", 17, _fuse_layernorm),
    ("BatchNormalization", 15, _fuse_batchnorm),
    ("Gelu", 20, _fuse_gelu),
    ("Softmax", 13, _fuse_softmax),
    ("Gemm", 13, _fuse_gemm),
    ("Attention", 23, fuse_attention),
    ("LSTM", 14, fuse_lstm),
]








def fuse_patterns(model: ir.Model, only: Iterable[str] | None = None) -> dict[str, int]:
    """Rewrite the patterns of :data:`FUSIONS` (those named in ``only``, if given) in ``model``
    (in place): its main graph, every subgraph (If branches, Loop and Scan bodies, nested ones
    too) and the bodies of its model-local functions, each where the default-domain opset (the
    function's own, for a function) has the op; returns how many of each were fused."""
    wanted = None if only is None else set(only)
    fusions = [f for f in FUSIONS if wanted is None or f[0] in wanted]
    opset = model.opset_imports.get("", 0)
    taken = _names(model.graph)
    # inner graphs first: a fusion of a Loop (LSTM) detaches its body
    graphs: list[tuple[ir.Graph, int, bool]] = [(g, opset, False) for g in reversed(list(model.graph.subgraphs()))]
    graphs.append((model.graph, opset, True))
    for f in model.functions.values():
        taken |= _names(f.graph)
        fopset = f.opset_imports.get("", opset)
        graphs += [(g, fopset, False) for g in (*reversed(list(f.graph.subgraphs())), f.graph)]
    stats = {name: 0 for name, since, _ in fusions if any(o >= since for _, o, _ in graphs)}
    for graph, graph_opset, main in graphs:
        rw = _Rewriter(graph, graph_opset, taken, main)
        rw.created = set()
        for name, since, fuse in fusions:
            if graph_opset < since:
                continue
            before = set(graph.initializers)
            found = fuse(rw)
            stats[name] += found
            rw.created |= set(graph.initializers) - before
            if found:
                rw.dead()  # later fusions see the fused graph (a value's uses no longer count the old form)
    return stats


def fuse_named(model: ir.Model, names: Iterable[str]) -> dict[str, int]:
    """:func:`fuse_patterns` limited to the fusions of :data:`FUSIONS` named in ``names`` (an
    exporter whose layers are already ONNX ops asks for ``("Gemm",)`` only)."""
    wanted = set(names)
    unknown = wanted - {name for name, _, _ in FUSIONS}
    if unknown:
        raise ValueError(f"no fusion named {sorted(unknown)}")
    return fuse_patterns(model, only=wanted)
