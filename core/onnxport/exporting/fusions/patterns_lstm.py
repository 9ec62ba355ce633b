"""LSTM loops -> the ONNX ``LSTM`` op, for :mod:`onnxport.exporting.fusions.patterns`.

A scan over time exports as a ``Loop`` of a constant trip count whose body reads step ``t`` of
a sequence (``Gather(X, t, axis=0)``; ``t = T - 1 - iteration`` when the scan runs backwards)
and carries a hidden state ``h`` and a cell state ``c``. The body is an LSTM step when, with
any association of the elementwise ops:

    c' = sigmoid(f) * c + sigmoid(i) * tanh(g)        h' = sigmoid(o) * tanh(c')

and each gate pre-activation ``i, f, g, o`` is linear in ``x_t`` and ``h`` with constant
weights: ``MatMul``/``Gemm`` by initializers, ``Add``s of constant biases, and ``Split``s of a
product computed for all gates at once (Flax's ``OptimizedLSTMCell``) or one product per gate
(``LSTMCell``). The scan outputs must be ``h'``. The weights are packed in ONNX's layout and
gate order (:data:`onnxport.opmath.rnn.LSTM_GATES`: ``i, o, f, c``) into new ``W``, ``R``, ``B``
initializers named after the kernels' common prefix, and the Loop becomes one ``LSTM`` node
(``direction="reverse"`` for a backward scan; the reversal of its outputs goes with it). A
forward node over a time-reversed sequence whose outputs are reversed back (how Flax writes
``RNN(reverse=True)``) becomes a reverse node over the sequence itself, and a forward and a
reverse node over the same sequence (``nnx.Bidirectional``) one ``direction="bidirectional"``
node whose directions' outputs are Gathers.

Numerics: the node computes ``x W^T + h R^T + Wb + Rb``, the traced form ``x Wx + (h Wh + b)``:
equal up to the order of the float additions.
"""

from __future__ import annotations

import os

import numpy as np
import onnx_ir as ir

from ...opmath.rnn import LSTM_GATES
from .pattern_match import _const, _node, _Rewriter

_FLOATS = {ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.DOUBLE}


def _peel_identity(v: ir.Value) -> ir.Value:
    while (n := _node(v, "Identity")) is not None:
        v = n.inputs[0]
    return v


def _int(v: ir.Value | None) -> int | None:
    a = _const(v)
    return int(a.reshape(())) if a is not None and a.size == 1 and a.dtype.kind in "iu" else None


class _Linear:
    """Terms ``x @ wx + h @ wh + b`` of a gate pre-activation ([batch, n])."""

    def __init__(self, n: int):
        self.wx: np.ndarray | None = None
        self.wh: np.ndarray | None = None
        self.b = np.zeros(n)
        self.names: list[str] = []


class _Body:
    def __init__(self, body: ir.Graph, h_in: ir.Value, steps: int):
        self.body, self.h_in, self.steps = body, h_in, steps
        self.x: ir.Value | None = None  # the outer sequence
        self.reverse: bool | None = None

    def _is_step(self, t: ir.Value) -> bool | None:
        """Forward (False) or backward (True) when ``t`` is the iteration number (or T-1 minus it)."""
        it = self.body.inputs[0]
        if t is it:
            return False
        n = _node(t, "Sub")
        if n is not None and n.inputs[1] is it and _int(n.inputs[0]) == self.steps - 1:
            return True
        return None

    def _x_t(self, v: ir.Value) -> bool:
        n = _node(v, "Gather")
        if n is None or n.graph is not self.body:
            return False
        axis = n.attributes.get("axis")
        rev = self._is_step(n.inputs[1])
        if (axis is not None and axis.value != 0) or rev is None or n.inputs[0].shape is None:
            return False
        if self.x is not None and (self.x is not n.inputs[0] or self.reverse != rev):
            return False
        self.x, self.reverse = n.inputs[0], rev
        return True

    def linear(self, v: ir.Value, n: int) -> _Linear | None:
        """``v`` ([batch, n]) as a :class:`_Linear`, or None."""
        node = v.producer()
        if node is None or node.domain not in ("", "ai.onnx") or node.graph is not self.body:
            return None
        out = _Linear(n)
        if node.op_type == "Add":
            parts = []
            for u in node.inputs:
                c = _const(u)
                if c is not None:
                    if c.size != n or (c.ndim == 2 and c.shape[0] != 1) or c.ndim > 2:
                        return None
                    out.b = out.b + c.reshape(n)
                    continue
                part = self.linear(u, n)
                if part is None:
                    return None
                parts.append(part)
            for p in parts:
                for key in ("wx", "wh"):
                    mine, theirs = getattr(out, key), getattr(p, key)
                    if theirs is not None:
                        setattr(out, key, theirs if mine is None else mine + theirs)
                out.b = out.b + p.b
                out.names += p.names
            return out
        if node.op_type in ("MatMul", "Gemm"):
            a, w = node.inputs[0], node.inputs[1]
            arr = _const(w)
            if arr is None or arr.ndim != 2:
                return None
            if node.op_type == "Gemm":
                attrs = {k: a_.value for k, a_ in node.attributes.items()}
                if attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0):
                    return None
                if attrs.get("transB", 0):
                    arr = arr.T
                if len(node.inputs) > 2 and node.inputs[2] is not None:
                    c = _const(node.inputs[2])
                    if c is None or c.size != n:
                        return None
                    out.b = out.b + c.reshape(n)
            if arr.shape[1] != n:
                return None
            if a is self.h_in:
                out.wh = arr
            elif self._x_t(a):
                out.wx = arr
            else:
                return None
            out.names.append(w.name or "")
            return out
        if node.op_type == "Split":
            axis = node.attributes.get("axis")
            whole = node.inputs[0]
            if whole.shape is None or len(whole.shape) != 2 or (axis is not None and axis.value not in (1, -1)):
                return None
            total = whole.shape[1]
            if not isinstance(total, int):
                return None
            sizes = _const(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] is not None else None
            k = len(node.outputs)
            sizes = [int(s) for s in sizes] if sizes is not None else [total // k] * k
            if sum(sizes) != total:
                return None
            idx = list(node.outputs).index(v)
            start = sum(sizes[:idx])
            if sizes[idx] != n:
                return None
            inner = self.linear(whole, total)
            if inner is None:
                return None
            sl = slice(start, start + n)
            out.wx = inner.wx[:, sl] if inner.wx is not None else None
            out.wh = inner.wh[:, sl] if inner.wh is not None else None
            out.b, out.names = inner.b[sl], inner.names
            return out
        return None


def _product(v: ir.Value, a_op: str, b_op: str | None) -> tuple[ir.Value, ir.Value] | None:
    """``(p, q)`` when ``v`` is ``a_op(p) * b_op(q)`` (``b_op`` None: ``q`` itself), in either order."""
    n = _node(v, "Mul")
    if n is None:
        return None
    for x, y in ((0, 1), (1, 0)):
        a = _node(n.inputs[x], a_op)
        if a is None:
            continue
        if b_op is None:
            return a.inputs[0], n.inputs[y]
        b = _node(n.inputs[y], b_op)
        if b is not None:
            return a.inputs[0], b.inputs[0]
    return None


def _match(loop: ir.Node) -> dict | None:
    attr = loop.attributes.get("body")
    if attr is None or attr.type != ir.AttributeType.GRAPH or len(loop.inputs) != 4:
        return None
    body: ir.Graph = attr.value
    steps = _int(loop.inputs[0])
    cond = _const(loop.inputs[1]) if loop.inputs[1] is not None else np.asarray(True)
    if steps is None or steps < 1 or cond is None or not bool(cond.reshape(())):
        return None
    if len(body.inputs) != 4 or _peel_identity(body.outputs[0]) is not body.inputs[1]:
        return None
    for hi, ci in ((0, 1), (1, 0)):
        h_in, c_in = body.inputs[2 + hi], body.inputs[2 + ci]
        h_out, c_out = _peel_identity(body.outputs[1 + hi]), _peel_identity(body.outputs[1 + ci])
        found = _product(h_out, "Sigmoid", "Tanh")
        if found is None or found[1] is not c_out:
            continue
        o = found[0]
        add = _node(c_out, "Add")
        if add is None:
            continue
        gates = None
        for x, y in ((0, 1), (1, 0)):
            fc = _product(add.inputs[x], "Sigmoid", None)
            ig = _product(add.inputs[y], "Sigmoid", "Tanh")
            if fc is not None and fc[1] is c_in and ig is not None:
                gates = {"i": ig[0], "o": o, "f": fc[0], "c": ig[1]}
                break
        if gates is None or h_in.shape is None or len(h_in.shape) != 2 or not isinstance(h_in.shape[1], int):
            continue
        hidden = h_in.shape[1]
        m = _Body(body, h_in, steps)
        lin = {g: m.linear(v, hidden) for g, v in gates.items()}
        if any(v is None or v.wx is None or v.wh is None for v in lin.values()) or m.x is None:
            continue
        if [_peel_identity(v) is h_out for v in body.outputs[3:]].count(False):
            continue
        return {"hidden": hidden, "lin": lin, "x": m.x, "reverse": m.reverse, "h": hi, "c": ci,
                "h0": loop.inputs[2 + hi], "c0": loop.inputs[2 + ci], "steps": steps}
    return None


def _zeros(v: ir.Value) -> bool:
    a = _const(v)
    if a is None:
        n = _node(v, "ConstantOfShape")
        if n is None:
            return False
        value = n.attributes.get("value")
        return value is None or not np.any(value.value.numpy())
    return not np.any(a)


def _emit(rw: _Rewriter, anchor: ir.Node, op: str, inputs: list, outputs: int = 1, **attrs) -> list[ir.Value]:
    node = ir.node(op, inputs, attributes={k: a for k, a in attrs.items() if a is not None},
                   num_outputs=outputs, name=rw.name(f"{anchor.name or op}_{op}"))
    for o in node.outputs:
        o.name = rw.name(f"{anchor.name or 'lstm'}_{op.lower()}")
    rw.graph.insert_before(anchor, node)
    return list(node.outputs)


def _take_over(rw: _Rewriter, old: ir.Value, new: ir.Value) -> None:
    """``new`` replaces ``old`` everywhere and takes its name (and type)."""
    new.dtype = old.dtype or new.dtype
    new.shape = old.shape or new.shape
    ir.convenience.replace_all_uses_with(old, new, replace_graph_outputs=True)
    name = old.name
    old.name = rw.name(f"{name}_unfused")
    new.name = name


def _reversal(v: ir.Value, size: int) -> ir.Node | None:
    """The Slice reading ``v`` (alone) that reverses its axis 0, if any."""
    uses = list(v.uses())
    if len(uses) != 1 or v.is_graph_output():
        return None
    n = uses[0].node
    if n.op_type != "Slice" or n.domain or len(n.inputs) < 5 or n.inputs[0] is not v:
        return None
    vals = [_const(i) for i in n.inputs[1:5]]
    if any(a is None or a.size != 1 for a in vals):
        return None
    start, end, axis, step = (int(a.reshape(())) for a in vals)
    if axis != 0 or step != -1 or start != -1 or end > -size - 1:
        return None
    return n


def fuse_lstm(rw: _Rewriter) -> int:
    count = 0
    for loop in list(rw.graph):
        if loop.op_type != "Loop" or loop.domain:
            continue
        m = _match(loop)
        if m is not None and _replace(rw, loop, m):
            count += 1
    if count:
        rw.dead()  # the Loops' bodies read the sequences no longer
        _absorb_reversals(rw)
        _pair_directions(rw)
    return count


def _replace(rw: _Rewriter, loop: ir.Node, m: dict) -> bool:
    """One LSTM node (and Squeezes) in place of ``loop``'s outputs."""
    x: ir.Value = m["x"]
    dtype = x.dtype
    if dtype not in _FLOATS or x.shape is None or len(x.shape) != 3 or x.shape[0] != m["steps"]:
        return False
    if any(v.dtype != dtype for v in (m["h0"], m["c0"])):
        return False
    hidden, lin = m["hidden"], m["lin"]
    np_dtype = dtype.numpy()
    w = np.concatenate([lin[g].wx.T for g in LSTM_GATES])[None].astype(np_dtype)
    r = np.concatenate([lin[g].wh.T for g in LSTM_GATES])[None].astype(np_dtype)
    b = np.concatenate([*(lin[g].b for g in LSTM_GATES), np.zeros(4 * hidden)])[None].astype(np_dtype)
    names = [n for g in LSTM_GATES for n in lin[g].names if n]
    prefix = os.path.commonprefix(names) if names else ""
    prefix = prefix[:prefix.rfind(".") + 1] if "." in prefix else "lstm_"
    axes: dict[int, ir.Value] = {}

    def axis(a: int) -> ir.Value:
        if a not in axes:
            axes[a] = rw.initializer("lstm_axes", np.asarray([a], np.int64))
        return axes[a]

    states = [None if _zeros(v) else _emit(rw, loop, "Unsqueeze", [v, axis(0)])[0] for v in (m["h0"], m["c0"])]
    y, y_h, y_c = _emit(rw, loop, "LSTM", [x, rw.initializer(f"{prefix}W", w), rw.initializer(f"{prefix}R", r),
                                           rw.initializer(f"{prefix}B", b), None, *states],
                        outputs=3, hidden_size=int(hidden), direction="reverse" if m["reverse"] else None)
    batch = x.shape[1]
    y.dtype, y.shape = dtype, ir.Shape([m["steps"], 1, batch, hidden])
    for v in (y_h, y_c):
        v.dtype, v.shape = dtype, ir.Shape([1, batch, hidden])
    outs = list(loop.outputs)
    for v, final in ((outs[m["h"]], y_h), (outs[m["c"]], y_c)):
        if v.uses() or v.is_graph_output():
            out = _emit(rw, loop, "Squeeze", [final, axis(0)])[0]
            out.dtype, out.shape = dtype, ir.Shape([batch, hidden])
            _take_over(rw, v, out)
    for v in outs[2:]:
        if not v.uses() and not v.is_graph_output():
            continue
        seq = _emit(rw, loop, "Squeeze", [y, axis(1)])[0]
        seq.dtype, seq.shape = dtype, ir.Shape([m["steps"], batch, hidden])
        rev = _reversal(v, m["steps"]) if m["reverse"] else None
        if m["reverse"] and rev is None:  # the Loop's order is backwards in time: keep it
            seq = _emit(rw, loop, "Slice", [seq, *(rw.initializer("lstm_slice", np.asarray([a], np.int64))
                                                   for a in (-1, np.iinfo(np.int64).min, 0, -1))])[0]
            seq.dtype, seq.shape = dtype, ir.Shape([m["steps"], batch, hidden])
        _take_over(rw, rev.outputs[0] if rev is not None else v, seq)
    return True


def _reverses_time(n: ir.Node | None, axis: int) -> bool:
    """``n`` is a Slice that reverses ``axis`` of its input whole."""
    if n is None or n.op_type != "Slice" or n.domain or len(n.inputs) < 5:
        return False
    vals = [_const(i) for i in n.inputs[1:5]]
    if any(a is None or a.size != 1 for a in vals):
        return False
    start, end, ax, step = (int(a.reshape(())) for a in vals)
    shape = n.inputs[0].shape
    if shape is None or not isinstance(size := shape[ax], int):
        return False
    return ax % len(shape) == axis % len(shape) and step == -1 and start in (-1, size - 1) and end <= -size - 1


def _unreversed_input(rw: _Rewriter, lstm: ir.Node) -> ir.Value | None:
    """The sequence ``X'`` when the node's X is ``X'`` reversed in time (a Slice on the time axis,
    maybe before a Transpose to time-major); a Transpose it needs is found or made."""
    x = lstm.inputs[0]
    n = x.producer()
    if _reverses_time(n, 0):
        return n.inputs[0]
    if n is None or n.op_type != "Transpose" or n.domain:
        return None
    perm = list(n.attributes["perm"].value)
    s = n.inputs[0].producer()
    if not _reverses_time(s, perm[0]) or len(list(x.uses())) != 1:
        return None
    source = s.inputs[0]
    for use in source.uses():  # a Transpose of the unreversed sequence already there
        t = use.node
        if t.op_type == "Transpose" and not t.domain and t.graph is rw.graph and list(t.attributes["perm"].value) == perm:
            return t.outputs[0]
    out = _emit(rw, lstm, "Transpose", [source], perm=perm)[0]
    out.dtype, out.shape = x.dtype, x.shape
    return out


def _output_reversals(y: ir.Value) -> list[ir.Node] | None:
    """The Slices that put each reader of ``Y`` back in time order (``Squeeze`` of the direction
    axis, maybe a Transpose, then a time reversal), or None."""
    found = []
    for use in y.uses():
        n = use.node
        if n.op_type != "Squeeze" or n.domain or _const(n.inputs[1]) is None or list(_const(n.inputs[1])) != [1]:
            return None
        axis, v = 0, n.outputs[0]
        nxt = _single_reader(v)
        if nxt is not None and nxt.op_type == "Transpose" and not nxt.domain:
            axis, v = list(nxt.attributes["perm"].value).index(0), nxt.outputs[0]
            nxt = _single_reader(v)
        if not _reverses_time(nxt, axis):
            return None
        found.append(nxt)
    return found if not y.is_graph_output() else None


def _single_reader(v: ir.Value) -> ir.Node | None:
    uses = list(v.uses())
    return uses[0].node if len(uses) == 1 and not v.is_graph_output() else None


def _direction(n: ir.Node) -> str:
    a = n.attributes.get("direction")
    return a.value if a is not None else "forward"


def _absorb_reversals(rw: _Rewriter) -> None:
    """A forward LSTM over a time-reversed sequence whose outputs are reversed back (Flax's
    ``RNN(reverse=True, keep_order=True)``) runs ``direction="reverse"`` on the sequence itself."""
    for n in list(rw.graph):
        if n.op_type != "LSTM" or n.domain or _direction(n) != "forward" or set(n.attributes) != {"hidden_size"}:
            continue
        rev = _output_reversals(n.outputs[0])
        if rev is None:
            continue
        x = _unreversed_input(rw, n)
        if x is None:
            continue
        for s in rev:
            ir.convenience.replace_all_uses_with(s.outputs[0], s.inputs[0], replace_graph_outputs=True)
            if s.outputs[0].is_graph_output():
                name = s.outputs[0].name
                s.outputs[0].name = rw.name(f"{name}_unfused")
                s.inputs[0].name = name
        n.replace_input_with(0, x)
        n.attributes["direction"] = ir.AttrString("direction", "reverse")


def _pair_directions(rw: _Rewriter) -> int:
    """A forward and a reverse LSTM over the same sequence, with constant weights and no given
    initial state -> one ``direction="bidirectional"`` node; each direction's ``Y`` is a Gather."""
    merged = 0
    nodes = [n for n in rw.graph if n.op_type == "LSTM" and not n.domain and len(n.inputs) >= 4
             and all(i is None for i in n.inputs[4:]) and set(n.attributes) <= {"hidden_size", "direction"}]
    used: set[int] = set()
    for f in nodes:
        if id(f) in used or _direction(f) != "forward":
            continue
        for r in nodes:
            if id(r) in used or r is f or _direction(r) != "reverse" or r.inputs[0] is not f.inputs[0]:
                continue
            if f.attributes["hidden_size"].value != r.attributes["hidden_size"].value:
                continue
            ws = [(_const(f.inputs[i]), _const(r.inputs[i])) for i in (1, 2, 3)]
            if any(a is None or b is None for a, b in ws) or any(n.outputs[k].uses() or n.outputs[k].is_graph_output()
                                                                 for n in (f, r) for k in (1, 2)):
                continue
            if not all(_squeezed_reader(n.outputs[0]) is not None or not n.outputs[0].uses() for n in (f, r)):
                continue
            names = [f.inputs[i].name or "" for i in (1, 2, 3)] + [r.inputs[i].name or "" for i in (1, 2, 3)]
            prefix = os.path.commonprefix(names)
            prefix = prefix[:prefix.rfind(".") + 1] if "." in prefix else "lstm_"
            inputs = [f.inputs[0]] + [rw.initializer(f"{prefix}{k}", np.concatenate(pair))
                                      for k, pair in zip("WRB", ws)]
            y = _emit(rw, f, "LSTM", inputs, outputs=1, hidden_size=f.attributes["hidden_size"].value,
                      direction="bidirectional")[0]
            t, _, b, h = f.outputs[0].shape if f.outputs[0].shape is not None else (None,) * 4
            y.dtype, y.shape = f.outputs[0].dtype, (ir.Shape([t, 2, b, h]) if h is not None else None)
            for d, n in enumerate((f, r)):
                sq = _squeezed_reader(n.outputs[0])
                if sq is None:
                    continue
                g = _emit(rw, f, "Gather", [y, rw.initializer("lstm_direction", np.asarray(d, np.int64))], axis=1)[0]
                _take_over(rw, sq.outputs[0], g)
            used |= {id(f), id(r)}
            merged += 1
            break
    return merged


def _squeezed_reader(y: ir.Value) -> ir.Node | None:
    """The one ``Squeeze(Y, [1])`` reading ``y``."""
    n = _single_reader(y)
    if n is None or n.op_type != "Squeeze" or n.domain or _const(n.inputs[1]) is None:
        return None
    return n if list(_const(n.inputs[1])) == [1] else None
