"""Scaled dot-product attention -> the ONNX ``Attention`` op (opset 23+), for :mod:`onnxport.exporting.fusions.patterns`.

The form matched: a score product of Q and K (``MatMul`` or ``Einsum``) over one feature axis,
then, in this order, scalings by constants (``Mul``/``Div``; a constant scaling of Q or K before
the product counts too), at most one additive bias (``Add``) and at most one mask
(``Where(mask, s, c)`` with ``c`` a huge negative constant), then ``Softmax`` over the key axis,
then a product with V over that axis. ``Transpose``s and reshapes that only add or drop size-1
axes may sit anywhere along the way. Each axis is followed by a label, so the layout of every
operand is free: batch axes shared by Q, K and V become Attention's batch and heads (the last
shared one is the heads, or none is), the query's other axes become its sequence (a
grouped-query head group among them), and the replacement arranges Q, K, V, the mask and the
output with ``Transpose``/``Reshape`` (``Expand`` where an operand broadcasts) around one
``Attention`` node, in its 4-D form ``[batch, heads, seq, dim]`` or its 3-D form
``[batch, seq, heads * dim]`` (``q_num_heads``), whichever needs fewer nodes (Transposes, which
move data, count more): Flax's ``[batch, seq, heads, dim]`` takes the 3-D form through Reshapes.

Only rewrites that keep the numbers: the scale is set explicitly (Attention's default is
``1/sqrt(D)``) and, for float64, only when float32 holds it exactly (the attribute is a float);
a constant mask equal to a top-left causal mask becomes ``is_causal=1``, another constant mask
with no fully-masked row a boolean ``attn_mask`` (a masked score's weight is exactly 0 on both
sides). A fully-masked row is where the forms part: ONNX gives zeros, the traced form a uniform
average (finite ``c``) or NaN (``-inf``); a mask that may mask a whole row (a computed one) is
rewritten only with a finite ``c`` at most half the dtype's lowest value, in float32/float64, as
an additive float mask ``Where(mask, 0, f)`` with ``f`` half the dtype's lowest value: a score
plus ``f`` rounds to ``f``, so every row, fully masked or not, gets the traced weights
(onnxruntime takes the lowest value itself for "fully masked"). A ``-inf`` computed mask is left
alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import onnx_ir as ir

from .pattern_match import _RESHAPES, _const, _Rewriter, _scalar, _sole_use

Labels = list  # per axis: a label (str) or None for a size-1 axis

_fresh = itertools.count()  # label numbers: one product's letters are not another's

_FLOATS = {ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.BFLOAT16, ir.DataType.DOUBLE}


def _shape(v: ir.Value | None) -> list | None:
    if v is None or v.shape is None:
        return None
    dims = list(v.shape)
    return [d if isinstance(d, int) else (d.value if isinstance(d, ir.SymbolicDim) else d) for d in dims]


def _is_label_move(node: ir.Node) -> bool:
    """A Transpose, or a reshape that only adds or drops size-1 axes."""
    if node.domain not in ("", "ai.onnx"):
        return False
    if node.op_type == "Transpose":
        return "perm" in node.attributes and _shape(node.inputs[0]) is not None
    if node.op_type in _RESHAPES:
        a, b = _shape(node.inputs[0]), _shape(node.outputs[0])
        if a is None or b is None or any(d is None for d in a + b):
            return False
        return [d for d in a if d != 1] == [d for d in b if d != 1]
    return False


def _moved(node: ir.Node, labels: Labels) -> Labels:
    """The labels of a label move's output from its input's."""
    if node.op_type == "Transpose":
        return [labels[p] for p in node.attributes["perm"].value]
    kept = iter(x for x in labels if x is not None)
    return [None if d == 1 else next(kept) for d in _shape(node.outputs[0])]


def _unmoved(node: ir.Node, labels: Labels) -> Labels:
    """The labels of a label move's input from its output's."""
    if node.op_type == "Transpose":
        perm = list(node.attributes["perm"].value)
        out: Labels = [None] * len(perm)
        for i, p in enumerate(perm):
            out[p] = labels[i]
        return out
    kept = iter(x for x in labels if x is not None)
    return [None if d == 1 else next(kept) for d in _shape(node.inputs[0])]


def _product_letters(node: ir.Node) -> tuple[list[str], list[str], list[str]] | None:
    """Einsum letters ``(a, b, out)`` of a 2-operand ``MatMul`` or explicit ``Einsum``."""
    if node.domain not in ("", "ai.onnx") or len(node.inputs) != 2:
        return None
    if node.op_type == "Einsum":
        eq = node.attributes.get("equation")
        if eq is None or "->" not in eq.value or "." in eq.value:
            return None
        ins, out = eq.value.replace(" ", "").split("->")
        parts = ins.split(",")
        if len(parts) != 2 or any(len(set(p)) != len(p) for p in (*parts, out)):
            return None
        return list(parts[0]), list(parts[1]), list(out)
    if node.op_type != "MatMul":
        return None
    ra, rb = (len(s) if (s := _shape(v)) is not None else 0 for v in node.inputs)
    if ra < 2 or rb < 2:
        return None
    nb = max(ra, rb) - 2
    batch = [f"b{i}" for i in range(nb)]
    return batch[nb - (ra - 2):] + ["m", "k"], batch[nb - (rb - 2):] + ["k", "n"], batch + ["m", "n"]


def _labelled(letters: list[str], v: ir.Value, names: dict[str, str], sizes: dict) -> Labels | None:
    """Labels of ``v``'s axes from an einsum operand's letters (size-1 axes unlabelled), sizes checked."""
    shape = _shape(v)
    if shape is None or len(shape) != len(letters):
        return None
    out: Labels = []
    for letter, d in zip(letters, shape):
        if d == 1:
            out.append(None)
            continue
        if d is None or d == 0:
            return None
        label = names.get(letter)
        if label is None:
            label = names[letter] = f"{next(_fresh)}:{letter}"
        if sizes.setdefault(label, d) != d:
            return None
        out.append(label)
    return out


def _source(v: ir.Value, labels: Labels, scale: list[float] | None) -> tuple[ir.Value, Labels]:
    """``v`` back through label moves (and constant scalings, multiplied into ``scale``)."""
    while (n := v.producer()) is not None:
        if _is_label_move(n):
            labels, v = _unmoved(n, labels), n.inputs[0]
            continue
        if scale is not None and n.op_type in ("Mul", "Div") and not n.domain and _shape(n.inputs[0]) == _shape(v):
            c = _factor(n.inputs[1])
            if c is None and n.op_type == "Mul" and _shape(n.inputs[1]) == _shape(v):
                c, other = _factor(n.inputs[0]), n.inputs[1]
            else:
                other = n.inputs[0]
            if c is not None and c != 0 and math.isfinite(c):
                scale[0] *= c if n.op_type == "Mul" else 1.0 / c
                v = other
                continue
        break
    return v, labels


def _factor(v: ir.Value | None) -> float | None:
    """A scalar constant, or the square root (or a cast) of one: a scale as an unfolded body
    (a function's) writes ``1 / sqrt(d)``."""
    n = v.producer() if v is not None else None
    to = n.attributes.get("to") if n is not None else None
    if n is not None and not n.domain and (n.op_type == "Sqrt" or (
            n.op_type == "Cast" and to is not None and ir.DataType(to.value) in _FLOATS)):
        c = _factor(n.inputs[0])
        if c is None or (n.op_type == "Sqrt" and c < 0):
            return None
        return math.sqrt(c) if n.op_type == "Sqrt" else c
    return _scalar(v)


def _uniform(v: ir.Value | None) -> float | None:
    """The value of a constant whose elements are all equal (a scalar broadcast)."""
    a = _const(v)
    if a is None or a.size == 0 or a.dtype.kind not in "fiu":
        return None
    first = a.reshape(-1)[0]
    return float(first) if (a == first).all() or (np.isnan(first) and np.isnan(a).all()) else None


def _additive_fill(fill: float, dtype: ir.DataType) -> float:
    """The additive mask value for a finite fill: half the dtype's lowest value. A score plus it
    rounds to it, as the traced form puts the fill itself there (every masked weight 0, a fully
    masked row uniform); onnxruntime reads the lowest value itself as "fully masked" (zeros)."""
    if not math.isfinite(fill):
        return fill
    return 0.5 * float(np.finfo(dtype.numpy()).min)


def _huge_negative(c: float | None, dtype: ir.DataType) -> bool:
    """A fill value whose softmax weight is exactly 0 beside any finite score."""
    if c is None:
        return False
    if c == -math.inf:
        return True
    return math.isfinite(c) and c <= 0.5 * float(np.finfo(dtype.numpy()).min)


class _Match:
    """One attention found from its Softmax."""

    def __init__(self, rw: _Rewriter, softmax: ir.Node):
        self.rw, self.softmax = rw, softmax
        self.sizes: dict = {}
        self.scale = [1.0]
        self.bias: tuple[ir.Value, Labels] | None = None
        self.mask: tuple[ir.Value, Labels, float] | None = None

    # -- the score side -------------------------------------------------------------------------
    def _walk(self, v: ir.Value, user: ir.Node, chain: list) -> bool:
        """Back from the softmax input ``v`` to the score product; ``chain``: (node, score input)."""
        n = v.producer()
        if n is None or n.domain not in ("", "ai.onnx") or _sole_use(v) is not user or len(chain) > 16:
            return False
        if n.op_type in ("MatMul", "Einsum") and _product_letters(n) is not None:
            self.product = n
            return True
        if _is_label_move(n):
            options = [0]
        elif n.op_type in ("Mul", "Div") and _factor(n.inputs[1]) is not None:
            options = [0]
        elif n.op_type == "Mul" and _factor(n.inputs[0]) is not None:
            options = [1]
        elif n.op_type == "Where" and _uniform(n.inputs[2]) is not None and _const(n.inputs[1]) is None:
            options = [1]
        elif n.op_type == "Add":
            options = [i for i in (0, 1) if _const(n.inputs[i]) is None]
        else:
            return False
        for i in options:
            if not _is_label_move(n) and (_shape(n.inputs[i]) is None or _shape(n.inputs[i]) != _shape(n.outputs[0])):
                continue  # the scores, not an operand they broadcast against
            chain.append((n, i))
            if self._walk(n.inputs[i], n, chain):
                return True
            chain.pop()
        return False

    def scores(self) -> bool:
        chain: list[tuple[ir.Node, int]] = []
        if not self._walk(self.softmax.inputs[0], self.softmax, chain):
            return False
        a, b, out = _product_letters(self.product)
        names: dict[str, str] = {}
        la = _labelled(a, self.product.inputs[0], names, self.sizes)
        lb = _labelled(b, self.product.inputs[1], names, self.sizes)
        lo = _labelled(out, self.product.outputs[0], names, self.sizes)
        if la is None or lb is None or lo is None:
            return False
        sa, sb, so = ({x for x in ls if x} for ls in (la, lb, lo))
        if (sa - sb - so) or (sb - sa - so) or (so - sa - sb):
            return False  # an axis summed in one operand only
        self.contracted = [x for x in la if x and x in sb and x not in so]
        batch = [x for x in lo if x and x in sa and x in sb]
        if not self.contracted:
            return False
        # forward along the chain: the labels at each step, scalings before any bias or mask
        labels, seen_mask = lo, False
        for n, i in reversed(chain):
            if _is_label_move(n):
                labels = _moved(n, labels)
                continue
            if n.op_type in ("Mul", "Div"):
                if seen_mask:
                    return False
                c = _factor(n.inputs[1 - i])
                if c is None or c == 0 or not math.isfinite(c) or (n.op_type == "Div" and i != 0):
                    return False
                self.scale[0] *= c if n.op_type == "Mul" else 1.0 / c
                continue
            other = n.inputs[0] if n.op_type == "Where" else n.inputs[1 - i]
            mlabels = self._align(other, labels, _shape(n.outputs[0]))
            if mlabels is None:
                return False
            other, mlabels = _source(other, mlabels, None)
            if n.op_type == "Add":
                if self.bias is not None or self.mask is not None:
                    return False
                self.bias = (other, mlabels)
            else:
                if self.mask is not None or other.dtype != ir.DataType.BOOL:
                    return False
                self.mask = (other, mlabels, _uniform(n.inputs[2]))
            seen_mask = True
        ax = self.softmax.attributes.get("axis")
        axis = ax.value if ax is not None else -1
        rank = len(labels)
        key = labels[axis % rank] if -rank <= axis < rank else None
        if key is None or key not in so or key in batch:
            return False
        if key in sb and key not in sa:
            q, k, lq, lk = 0, 1, la, lb
        elif key in sa and key not in sb:
            q, k, lq, lk = 1, 0, lb, la
        else:
            return False
        if [x for x in lk if x and x not in batch and x not in self.contracted] != [key]:
            return False
        self.key, self.batch, self.p_labels = key, batch, labels
        self.queries = [x for x in lo if x and x not in batch and x != key]
        self.q, self.lq = _source(self.product.inputs[q], lq, self.scale)
        self.k, self.lk = _source(self.product.inputs[k], lk, self.scale)
        return True

    def _align(self, v: ir.Value, labels: Labels, out_shape: list | None) -> Labels | None:
        """Labels of an operand that broadcasts (right-aligned) against a value labelled ``labels``."""
        shape = _shape(v)
        if shape is None or out_shape is None or len(shape) > len(labels) or len(out_shape) != len(labels):
            return None
        full = labels[len(labels) - len(shape):]
        res: Labels = []
        for d, label in zip(shape, full):
            if d == 1:
                res.append(None)
            elif label is not None and self.sizes.get(label) == d:
                res.append(label)
            else:
                return None
        return res

    # -- the value side -------------------------------------------------------------------------
    def values(self) -> bool:
        v, labels = self.softmax.outputs[0], self.p_labels
        while True:
            n = _sole_use(v)
            if n is None:
                return False
            if _is_label_move(n):
                v, labels = n.outputs[0], _moved(n, labels)
                continue
            break
        letters = _product_letters(n)
        if letters is None:
            return False
        p = 0 if n.inputs[0] is v else 1
        if n.inputs[1 - p] is v:
            return False
        lp_letters, lv_letters, out_letters = letters[p], letters[1 - p], letters[2]
        names: dict[str, str] = {}
        shape = _shape(v)
        if shape is None or len(shape) != len(lp_letters):
            return False
        for letter, label, d in zip(lp_letters, labels, shape):
            if label is not None:
                if names.setdefault(letter, label) != label:
                    return False
            elif d != 1:
                return False
        lv = _labelled(lv_letters, n.inputs[1 - p], names, self.sizes)
        lo = _labelled(out_letters, n.outputs[0], names, self.sizes)
        if lv is None or lo is None:
            return False
        sv, so, sp = {x for x in lv if x}, {x for x in lo if x}, {x for x in labels if x}
        if self.key not in sv or self.key in so or (sv - so - {self.key}) & sp:
            return False
        if (sp - so - {self.key}) or (sv - so - sp - {self.key}):
            return False  # another summed axis
        if not set(self.batch) <= so or any(x in sv for x in self.queries):
            return False
        self.dv = [x for x in lv if x and x not in sp]
        if not self.dv or set(x for x in lo if x) != set(self.batch) | set(self.queries) | set(self.dv):
            return False
        self.value_product = n
        self.v, self.lv = _source(n.inputs[1 - p], lv, None)
        out, lout = n.outputs[0], lo
        while (m := _sole_use(out)) is not None and _is_label_move(m):
            out, lout = m.outputs[0], _moved(m, lout)
        self.out, self.lout = out, lout
        return True


def _arrange(rw: _Rewriter, anchor: ir.Node, v: ir.Value, labels: Labels, groups: list[list[str]],
             sizes: dict, broadcast: tuple[int, ...] = ()) -> ir.Value | None:
    """``v`` (axes ``labels``) as ``[prod(group) for group in groups]``: Transpose, Expand (a label
    ``v`` lacks; a group in ``broadcast`` that ``v`` lacks entirely stays size 1) and Reshape."""
    flat = [x for g in groups for x in g]
    present = [x for x in labels if x is not None]
    if not set(present) <= set(flat) or len(set(present)) != len(present):
        return None
    units = [i for i, x in enumerate(labels) if x is None]
    perm = units + sorted((i for i, x in enumerate(labels) if x is not None), key=lambda i: flat.index(labels[i]))
    dtype = v.dtype
    if perm != list(range(len(labels))):
        v = _emit(rw, anchor, "Transpose", [v], dtype, [(_shape(v))[p] for p in perm], perm=perm)
    missing = {x for x in flat if x not in present}
    kept_ones = {i for i in broadcast if groups[i] and not set(groups[i]) & set(present)}
    expand = [x for gi, g in enumerate(groups) for x in g if x in missing and gi not in kept_ones]
    per_label = [sizes[x] if x in present else 1 for x in flat]
    if expand:
        if any(not isinstance(sizes[x], int) for x in expand):
            return None
        v = _reshape(rw, anchor, v, per_label)
        if v is None:
            return None
        target = [sizes[x] if x in expand else 1 for x in flat]
        per_label = [sizes[x] if (x in present or x in expand) else 1 for x in flat]
        v = _emit(rw, anchor, "Expand", [v, rw.initializer("attention_expand", np.asarray(target, np.int64))],
                  dtype, per_label)
    final, i = [], 0
    for g in groups:
        part = per_label[i:i + len(g)]
        i += len(g)
        if any(not isinstance(d, int) for d in part):
            if len(part) != 1:
                return None
            final.append(part[0])
        else:
            final.append(int(np.prod(part, dtype=np.int64)))
    return _reshape(rw, anchor, v, final)


def _reshape(rw: _Rewriter, anchor: ir.Node, v: ir.Value, dims: list) -> ir.Value | None:
    """``v`` reshaped to ``dims`` (one symbolic dim at most, written -1); ``v`` when it has them."""
    if _shape(v) == dims:
        return v
    if sum(not isinstance(d, int) for d in dims) > 1:
        return None
    spec = [d if isinstance(d, int) else -1 for d in dims]
    return _emit(rw, anchor, "Reshape", [v, rw.initializer("attention_shape", np.asarray(spec, np.int64))],
                 v.dtype, dims)


def _emit(rw: _Rewriter, anchor: ir.Node, op: str, inputs: list, dtype, shape, **attrs) -> ir.Value:
    node = ir.node(op, inputs, attributes={k: a for k, a in attrs.items() if a is not None},
                   name=rw.name(f"{anchor.name or op}_{op}"))
    out = node.outputs[0]
    out.name = rw.name(f"{anchor.name or 'attention'}_{op.lower()}")
    out.dtype = dtype
    out.shape = ir.Shape(shape) if shape is not None else None
    rw.graph.insert_before(anchor, node)
    return out


def _arrange_np(a: np.ndarray, labels: Labels, groups: list[list[str]]) -> np.ndarray:
    """:func:`_arrange` for a constant, every group that ``a`` lacks entirely kept size 1."""
    flat = [x for g in groups for x in g]
    a = a.reshape([d for d, x in zip(a.shape, labels) if x is not None])
    present = [x for x in labels if x is not None]
    a = np.transpose(a, sorted(range(len(present)), key=lambda i: flat.index(present[i])))
    a = a.reshape([a.shape[sorted(present, key=flat.index).index(x)] if x in present else 1 for x in flat])
    out, i = [], 0
    for g in groups:
        out.append(int(np.prod(a.shape[i:i + len(g)])))
        i += len(g)
    return a.reshape(out)


def fuse_attention(rw: _Rewriter) -> int:
    count = 0
    for sm in list(rw.graph):
        if sm.op_type != "Softmax" or sm.domain or sm.graph is None:
            continue
        m = _Match(rw, sm)
        if not m.scores() or not m.values():
            continue
        if _rewrite(rw, m):
            count += 1
    return count


def _rewrite(rw: _Rewriter, m: _Match) -> bool:
    dtype = m.q.dtype
    if dtype not in _FLOATS or m.k.dtype != dtype or m.v.dtype != dtype or m.out.dtype != dtype:
        return False
    scale = m.scale[0]
    if not math.isfinite(scale) or scale <= 0 or (dtype == ir.DataType.DOUBLE and float(np.float32(scale)) != scale):
        return False
    heads = m.batch[-1:]
    bgroup = m.batch[:-1]
    sizes = m.sizes
    if any(not isinstance(sizes[x], int) for x in m.contracted + m.dv + [m.key]):
        return False
    layout = _layout(m, bgroup, heads)
    if layout is None:
        return False
    anchor = m.out.producer()
    mask_in: ir.Value | None = None
    causal = False
    mgroups = [layout["batch"], layout["heads"], m.queries, [m.key]]
    if m.mask is not None:
        cond, labels, fill = m.mask
        arr = _const(cond)
        if not _huge_negative(fill, dtype):
            return False
        if arr is not None:
            a = _arrange_np(np.asarray(arr, bool), labels, mgroups)
            a = np.broadcast_to(a, a.shape[:3] + (sizes[m.key],))
            full_rows = a.any(-1).all()
            tril = np.tril(np.ones(a.shape[-2:], bool))
            if a.all():
                pass
            elif full_rows and len(m.queries) == 1 and (a == tril).all() and m.bias is None:
                causal = True
            elif full_rows and m.bias is None:
                mask_in = rw.initializer("attention_mask", np.ascontiguousarray(a))
            elif not (math.isfinite(fill) or full_rows) or dtype not in (ir.DataType.FLOAT, ir.DataType.DOUBLE):
                return False
            else:
                fill_arr = np.where(a, 0, _additive_fill(fill, dtype)).astype(dtype.numpy())
                mask_in = rw.initializer("attention_mask", fill_arr)
                if m.bias is not None:
                    b = _arrange(rw, anchor, m.bias[0], m.bias[1], mgroups, sizes, broadcast=(0, 1, 2))
                    if b is None:
                        return False
                    mask_in = _emit(rw, anchor, "Add", [b, mask_in], dtype, None)
        else:
            if not math.isfinite(fill) or dtype not in (ir.DataType.FLOAT, ir.DataType.DOUBLE):
                return False
            c = _arrange(rw, anchor, cond, labels, mgroups, sizes, broadcast=(0, 1, 2))
            if c is None:
                return False
            zero = rw.initializer("attention_zero", np.zeros((), dtype.numpy()))
            if m.bias is not None:
                zero = _arrange(rw, anchor, m.bias[0], m.bias[1], mgroups, sizes, broadcast=(0, 1, 2))
                if zero is None:
                    return False
            fill_v = rw.initializer("attention_fill", np.asarray(_additive_fill(fill, dtype), dtype.numpy()))
            mask_in = _emit(rw, anchor, "Where", [c, zero, fill_v], dtype, None)
    elif m.bias is not None:
        if m.bias[0].dtype != dtype:
            return False
        mask_in = _arrange(rw, anchor, m.bias[0], m.bias[1], mgroups, sizes, broadcast=(0, 1, 2))
        if mask_in is None:
            return False
    if mask_in is not None and (s := _shape(mask_in)) is not None and s[-1] != sizes[m.key]:
        # ONNX pads a shorter last mask axis with masked positions: broadcast it
        shape = rw.initializer("attention_expand", np.asarray([1] * (len(s) - 1) + [sizes[m.key]], np.int64))
        mask_in = _emit(rw, anchor, "Expand", [mask_in, shape], mask_in.dtype, s[:-1] + [sizes[m.key]])
    q = _arrange(rw, anchor, m.q, m.lq, layout["q"], sizes)
    k = _arrange(rw, anchor, m.k, m.lk, layout["k"], sizes)
    v = _arrange(rw, anchor, m.v, m.lv, layout["v"], sizes)
    if q is None or k is None or v is None:
        return False
    y_shape, perm, steps = layout["out"]
    attrs = {"scale": float(scale), "is_causal": 1 if causal else None, **layout["attrs"]}
    inputs = [q, k, v] + ([mask_in] if mask_in is not None else [])
    if not steps:
        rw.replace(anchor, "Attention", inputs, **{k_: a for k_, a in attrs.items() if a is not None})
        return True
    y = _emit(rw, anchor, "Attention", inputs, dtype, y_shape, **attrs)
    for i, (op, dims) in enumerate(steps):
        last = i == len(steps) - 1
        if op == "Transpose":
            if last:
                rw.replace(anchor, "Transpose", [y], perm=perm)
            else:
                y = _emit(rw, anchor, "Transpose", [y], dtype, dims, perm=perm)
        else:
            spec = rw.initializer("attention_shape", np.asarray([d if isinstance(d, int) else -1 for d in dims],
                                                                np.int64))
            if last:
                rw.replace(anchor, "Reshape", [y, spec])
            else:
                y = _emit(rw, anchor, "Reshape", [y, spec], dtype, dims)
    return True


def _out_steps(m: _Match, groups_y: list[list[str]]) -> tuple[list, list[int], list] | None:
    """``(Attention output shape, perm, [(op, dims)])``: the output arranged as ``m.out``."""
    sizes = m.sizes
    flat_y = [x for g in groups_y for x in g]
    if {x for x in m.lout if x} != set(flat_y):
        return None
    y_shape = [_group_size(g, sizes) for g in groups_y]
    final_shape = _shape(m.out)
    if any(d is None for d in y_shape) or final_shape is None:
        return None
    if sum(1 for s in [*y_shape, *final_shape] if not isinstance(s, int)) > 2:
        return None
    present = [x for x in m.lout if x]
    perm = [flat_y.index(x) for x in present]
    needs_perm = perm != list(range(len(perm)))
    per_label = [sizes[x] for x in flat_y]
    steps = []
    if per_label != y_shape:
        steps.append(("Reshape", per_label))
    if needs_perm:
        steps.append(("Transpose", [per_label[p] for p in perm]))
    cur = [sizes[x] for x in present] if needs_perm else per_label
    if cur != final_shape:
        steps.append(("Reshape", final_shape))
    return y_shape, perm, steps


def _arrange_cost(v: ir.Value, labels: Labels, groups: list[list[str]], sizes: dict) -> float | None:
    """What :func:`_arrange` adds: a node each, a Transpose (it moves data) 1.5."""
    flat = [x for g in groups for x in g]
    present = [x for x in labels if x is not None]
    if not set(present) <= set(flat):
        return None
    order = [i for i, x in enumerate(labels) if x is None] + sorted(
        (i for i, x in enumerate(labels) if x is not None), key=lambda i: flat.index(labels[i]))
    cost = 1.5 if order != list(range(len(labels))) else 0.0
    if set(flat) - set(present):
        return cost + 3  # Reshape, Expand, Reshape
    final = [_group_size(g, sizes) for g in groups]
    return cost + (0 if [sizes[x] for x in present] == final or _shape(v) == final else 1)


def _layout(m: _Match, bgroup: list[str], heads: list[str]) -> dict | None:
    """The cheaper of Attention's two input forms for this match: 4-D ``[batch, heads, seq, dim]``
    or 3-D ``[batch, seq, heads * dim]`` (``q_num_heads``; Flax's ``[batch, seq, heads, dim]``
    is a Reshape away from it); the 4-D one when they cost the same."""
    forms = []
    splits = ((bgroup, heads), (bgroup + heads, [])) if heads else ((bgroup, heads),)
    for b_, h_ in splits:
        heads_size = m.sizes[h_[0]] if h_ else 1
        forms.append(({"q": [b_, h_, m.queries, m.contracted], "k": [b_, h_, [m.key], m.contracted],
                       "v": [b_, h_, [m.key], m.dv], "y": [b_, h_, m.queries, m.dv]}, {}))
        if isinstance(heads_size, int):
            forms.append(({"q": [b_, m.queries, h_ + m.contracted],
                           "k": [b_, [m.key], h_ + m.contracted],
                           "v": [b_, [m.key], h_ + m.dv], "y": [b_, m.queries, h_ + m.dv]},
                          {"q_num_heads": int(heads_size), "kv_num_heads": int(heads_size)}))
    best, best_cost = None, math.inf
    for groups, attrs in forms:
        out = _out_steps(m, groups["y"])
        costs = [_arrange_cost(val, labels, groups[key], m.sizes)
                 for key, val, labels in (("q", m.q, m.lq), ("k", m.k, m.lk), ("v", m.v, m.lv))]
        if out is None or None in costs:
            continue
        cost = sum(costs) + sum(1.5 if op == "Transpose" else 1 for op, _ in out[2])
        if cost < best_cost:
            best, best_cost = {**groups, "out": out, "attrs": attrs, "batch": groups["y"][0],
                               "heads": groups["y"][1] if len(groups["y"]) == 4 else (
                                   [x for x in groups["y"][2] if x not in m.dv])}, cost
    return best


def _group_size(group: list[str], sizes: dict):
    dims = [sizes[x] for x in group]
    if all(isinstance(d, int) for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    return dims[0] if len(dims) == 1 else None
