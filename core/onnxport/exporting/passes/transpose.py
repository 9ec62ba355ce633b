"""The layout pass: Transposes pushed through elementwise ops, reductions and Concat until pairs cancel.

Exporters of channels-last frameworks (TensorFlow, JAX) emit each Conv / pooling / normalization
as ``Transpose(NHWC->NCHW) -> op -> Transpose(NCHW->NHWC)``. :func:`push_transposes` moves a
Transpose below the ops that do not care about the layout (elementwise math, whose other operands
are Transposes of the same permutation, constants or broadcast vectors; reductions and Concat,
whose axes are renumbered; Softmax; a Pad with constant pads, which are permuted), composes a Transpose of a Transpose into one and drops
identity permutations, so that a chain of convolutions keeps one Transpose at its input and one
where a layout-bound op (a Reshape, a graph output) reads it. A Transpose moved below the op that
computes a graph output takes over the output's name. Rewritten values keep a type: their element
type and (where it can be worked out) their shape, in the new layout.

Weights are never rewritten: a broadcast operand that is an initializer gets a Reshape (its
non-unit dims keep their order) instead of a transposed copy; a Constant is transposed in place.
A Conv without a bias followed by ``Add`` of such a reshaped vector takes the vector as its bias.
A Transpose left that only moves size-1 dims becomes a Reshape.
Framework-free; works on the main graph of an ``onnx_ir.Model``. Both the JAX and the TensorFlow
exporters run it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir

from ..builder import array_tensor

#: elementwise ops whose every input is data (broadcast against the output)
_ELEMENTWISE = {
    "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift", "BitwiseAnd",
    "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "Ceil",
    "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater",
    "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Less",
    "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "Pow",
    "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus",
    "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Where", "Xor",
}
_REDUCE = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"}


def _perm(node: ir.Node) -> list[int] | None:
    attr = node.attributes.get("perm")
    return None if attr is None else [int(p) for p in attr.value]


def _is_transpose(v: ir.Value | None, perm: list[int] | None = None) -> bool:
    node = v.producer() if v is not None else None
    return (node is not None and node.op_type == "Transpose" and node.domain in ("", "ai.onnx")
            and _perm(node) is not None and (perm is None or _perm(node) == perm))


def _inverse(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _constant(v: ir.Value) -> np.ndarray | None:
    """The value of a Constant node's output (never of an initializer: weights stay as they are)."""
    node = v.producer()
    if node is None or node.op_type != "Constant" or v.const_value is None:
        return None
    return v.const_value.numpy()


def _static_shape(v: ir.Value) -> list[int] | None:
    if v.shape is None or not all(isinstance(d, int) for d in v.shape):
        return None
    return [int(d) for d in v.shape]


class _Pass:
    def __init__(self, graph: ir.Graph, opset: int):
        self.graph = graph
        self.opset = opset
        self.changes = 0
        self._counters: dict[str, int] = {}  # per name base: where _fresh's next probe starts

    # -- helpers -----------------------------------------------------------------------------------
    def _fresh(self, base: str) -> str:
        taken, counters = self._taken, self._counters
        name, i = base, counters.get(base, 0)
        if i:
            name = f"{base}_{i}"
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        counters[base] = i + 1  # the next probe of this base starts past the names it gave
        taken.add(name)
        return name

    def _const(self, arr: np.ndarray, before: ir.Node) -> ir.Value:
        tensor = array_tensor(np.asarray(arr))
        node = ir.Node("", "Constant", [], attributes=[ir.AttrTensor("value", tensor)],
                       name=self._fresh("transposed_constant"))
        out = node.outputs[0]
        out.name = self._fresh("transposed_constant")
        out.const_value, out.dtype, out.shape = tensor, tensor.dtype, ir.Shape(list(arr.shape))
        self.graph.insert_before(before, node)
        return out

    # -- one input of a pushed op --------------------------------------------------------------
    def _operand(self, v: ir.Value | None, perm: list[int], rank: int, user: ir.Node) -> Any:
        """What ``user`` reads instead of ``v`` once the Transpose ``perm`` moves below it;
        False when that is not possible."""
        if v is None:
            return None
        if _is_transpose(v, perm):
            return v.producer().inputs[0]
        shape = _static_shape(v)
        if shape is not None and all(d == 1 for d in shape) and len(shape) <= rank:
            return v
        inv = _inverse(perm)
        arr = _constant(v)
        if arr is not None and arr.ndim <= rank:
            full = arr.reshape((1,) * (rank - arr.ndim) + arr.shape)
            return ("const", np.ascontiguousarray(np.transpose(full, inv)))
        if shape is None or len(shape) > rank:
            return False
        full = [1] * (rank - len(shape)) + shape
        moved = [full[inv[i]] for i in range(rank)]
        order = [inv[i] for i in range(rank) if full[inv[i]] != 1]
        if order != sorted(order):
            return False
        return ("reshape", moved)

    def push_through(self, t: ir.Node, user: ir.Node) -> bool:
        """Move the Transpose ``t`` below ``user`` (one of its readers)."""
        perm = _perm(t)
        rank = len(perm)
        out = user.outputs[0]
        if len(user.outputs) != 1 or user.domain not in ("", "ai.onnx"):
            return False
        op = user.op_type
        data = list(user.inputs)
        axes_attr = None
        new_perm = perm
        if op in _ELEMENTWISE:
            idx = range(len(data))
            if op == "Clip":
                idx = range(1)
        elif op in _REDUCE:
            idx = range(1)
            if len(data) > 1 and data[1] is not None:
                axes = _constant(data[1])
                if axes is None:
                    return False
                axes_list = [int(a) % rank for a in np.asarray(axes).reshape(-1)]
            elif "axes" in user.attributes:
                axes_list = [int(a) % rank for a in user.attributes["axes"].value]
            else:
                return False  # all axes, noop_with_empty_axes: nothing to gain
            keep = int(user.attributes["keepdims"].value) if "keepdims" in user.attributes else 1
            new_axes = sorted(perm[a] for a in axes_list)
            if keep:
                new_perm = perm
            else:
                rest = [perm[i] for i in range(rank) if i not in axes_list]
                order = sorted(rest)
                new_perm = [order.index(r) for r in rest]
            axes_attr = new_axes
        elif op == "Concat":
            idx = range(len(data))
        elif op == "Softmax" and self.opset >= 13:
            idx = range(1)
        elif op == "Pad":
            pads = _constant(data[1]) if len(data) > 1 and data[1] is not None else None
            if pads is None or (len(data) > 3 and data[3] is not None) or data[0] is not t.outputs[0]:
                return False
            pads = np.asarray(pads).reshape(-1)
            inv = _inverse(perm)
            axes_attr = [int(pads[inv[k]]) for k in range(rank)] + [int(pads[rank + inv[k]]) for k in range(rank)]
            idx = range(1)
        else:
            return False
        replaced: dict[int, Any] = {}
        for i in idx:
            if op in _REDUCE or op in ("Softmax", "Pad"):
                if data[i] is not t.outputs[0]:
                    return False
                replaced[i] = t.inputs[0]
                continue
            r = self._operand(data[i], perm, rank, user)
            if r is False:
                return False
            if op == "Concat" and isinstance(r, tuple):
                return False  # Concat needs whole tensors, not broadcasts
            replaced[i] = r
        if op in _ELEMENTWISE and out.shape is not None and len(out.shape) != rank:
            return False  # the operands are of rank <= ``rank`` (checked above): a known shape agrees
        # rewrite
        for i, r in replaced.items():
            if isinstance(r, tuple):
                kind, payload = r
                if kind == "const":
                    r = self._const(payload, user)
                else:
                    shape = self._const(np.asarray(payload, dtype=np.int64), user)
                    node = ir.Node("", "Reshape", [data[i], shape], name=self._fresh(f"{user.name}/Reshape"))
                    node.outputs[0].name = self._fresh(f"{data[i].name}_reshaped")
                    _set_type(node.outputs[0], data[i].dtype, payload)
                    self.graph.insert_before(user, node)
                    r = node.outputs[0]
            if r is not data[i]:
                user.replace_input_with(i, r)
        if op == "Pad":
            user.replace_input_with(1, self._const(np.asarray(axes_attr, dtype=np.int64), user))
        elif axes_attr is not None:
            if len(data) > 1 and data[1] is not None:
                user.replace_input_with(1, self._const(np.asarray(axes_attr, dtype=np.int64), user))
            else:
                user.attributes["axes"] = ir.AttrInt64s("axes", axes_attr)
        if op == "Concat":
            user.attributes["axis"] = ir.AttrInt64("axis", perm[int(user.attributes["axis"].value) % rank])
        if op == "Softmax":
            axis = int(user.attributes["axis"].value) if "axis" in user.attributes else -1
            user.attributes["axis"] = ir.AttrInt64("axis", perm[axis % rank])
        old_shape = out.shape
        dtype = out.dtype if out.dtype is not None else _result_dtype(user)
        moved_shape = _moved_shape(user, old_shape, new_perm)
        new_node = ir.Node("", "Transpose", [out], attributes=[ir.AttrInt64s("perm", new_perm)],
                           name=self._fresh(f"{user.name}/Transpose"))
        new_out = new_node.outputs[0]
        new_out.name = self._fresh(f"{out.name}_nhwc")
        out.replace_all_uses_with(new_out, replace_graph_outputs=True)
        if new_out.is_graph_output():  # the Transpose's result keeps the graph output's name
            out.name, new_out.name = new_out.name, out.name
        new_node.replace_input_with(0, out)
        if old_shape is None and moved_shape is not None:
            old_shape = ir.Shape([moved_shape[p] for p in new_perm])
        _set_type(new_out, dtype, old_shape)
        _set_type(out, dtype, moved_shape)
        self.graph.insert_after(user, new_node)
        self.changes += 1
        return True

    def compose(self, t: ir.Node, user: ir.Node) -> bool:
        """``Transpose(Transpose(x, p), q)`` -> ``Transpose(x, p[q])``, or ``x`` when the identity."""
        p, q = _perm(t), _perm(user)
        if p is None or q is None or len(p) != len(q):
            return False
        composed = [p[i] for i in q]
        out = user.outputs[0]
        if composed == list(range(len(p))):
            src = t.inputs[0]
            if out.is_graph_output():
                if src.producer() is None or src.is_graph_output():
                    return False  # a graph input (or another output) cannot take the output's name
                dtype, shape = out.dtype, out.shape
                out.replace_all_uses_with(src, replace_graph_outputs=True)
                out.name, src.name = None, out.name  # the value computed before the pair is the output now
                _set_type(src, src.dtype or dtype, src.shape or shape)
            else:
                out.replace_all_uses_with(src)
            self.graph.remove(user, safe=True)
        else:
            user.replace_input_with(0, t.inputs[0])
            user.attributes["perm"] = ir.AttrInt64s("perm", composed)
        self.changes += 1
        return True

    def fold_conv_bias(self) -> None:
        """``Add(Conv(x, w), Reshape(b, [1, C, 1 ...]))`` with a 1-D ``b`` -> ``Conv(x, w, b)``."""
        for node in list(self.graph):
            if node.op_type != "Add" or node.domain not in ("", "ai.onnx"):
                continue
            for i in (0, 1):
                conv_out, other = node.inputs[i], node.inputs[1 - i]
                conv = conv_out.producer() if conv_out is not None else None
                shp = other.producer() if other is not None else None
                if (conv is None or conv.op_type != "Conv" or len(conv.inputs) > 2 or len(conv_out.uses()) != 1
                        or conv_out.is_graph_output() or shp is None or shp.op_type != "Reshape"):
                    continue
                bias = _through_reshapes(shp.inputs[0])
                if bias.shape is None or len(bias.shape) != 1:
                    continue
                target = _static_shape(other)
                if target is None or len(target) < 3 or target[1] != bias.shape[0] or any(
                        d != 1 for j, d in enumerate(target) if j != 1):
                    continue
                if len(conv.inputs) == 2:
                    new_conv = ir.Node("", "Conv", [*conv.inputs, bias], attributes=list(conv.attributes.values()),
                                       name=conv.name)
                    new_conv.metadata_props.update(conv.metadata_props)
                    self.graph.insert_before(conv, new_conv)
                    out = node.outputs[0]
                    new_conv.outputs[0].name = conv_out.name
                    new_conv.outputs[0].dtype, new_conv.outputs[0].shape = out.dtype, out.shape
                    if out.is_graph_output():
                        continue
                    out.replace_all_uses_with(new_conv.outputs[0])
                    self.graph.remove([node, conv], safe=True)
                    _drop_dead_chain(self.graph, shp)
                    self.changes += 1
                break

    def run(self) -> int:
        self._taken = {v.name for n in self.graph for v in n.outputs} | {v.name for v in self.graph.inputs}
        self._taken |= set(self.graph.initializers)
        self._taken |= {n.name for n in self.graph if n.name}
        progress = True
        #: (Transpose, user, what the user reads) of pushes that failed: while none of it changes,
        #: the next pass fails the same way and need not try (the objects are held, ids stay unique)
        failed: set[tuple[Any, ...]] = set()
        while progress:
            progress = False
            for t in [n for n in self.graph if n.op_type == "Transpose"]:
                if t.graph is None or t.domain not in ("", "ai.onnx") or _perm(t) is None:
                    continue
                for use in list(t.outputs[0].uses()):
                    user = use.node if hasattr(use, "node") else use[0]
                    if user.graph is None:
                        continue
                    if user.op_type == "Transpose" and user.domain in ("", "ai.onnx"):
                        progress |= self.compose(t, user)
                    else:
                        key = (t, user, *user.inputs,
                               *(None if v is None else (v.producer(), None if v.shape is None else tuple(v.shape)) for v in user.inputs))
                        if key in failed:
                            continue
                        moved = self.push_through(t, user)
                        if not moved:
                            failed.add(key)
                        progress |= moved
                if not t.outputs[0].uses() and not t.outputs[0].is_graph_output() and t.graph is not None:
                    self.graph.remove(t, safe=True)
        self.fold_conv_bias()
        self.unit_moves_to_reshapes()
        return self.changes

    def unit_moves_to_reshapes(self) -> None:
        """A Transpose that only moves size-1 dims (the non-unit dims keep their order, a squeeze-
        excite vector [N, 1, 1, C] -> [N, C, 1, 1]) is a Reshape: no data moves."""
        for node in list(self.graph):
            if node.op_type != "Transpose" or node.domain not in ("", "ai.onnx") or _perm(node) is None:
                continue
            x = node.inputs[0]
            perm = _perm(node)
            if x is None or x.shape is None or len(x.shape) != len(perm):
                continue
            dims = list(x.shape)
            moved = [i for i in perm if not (isinstance(dims[i], int) and dims[i] == 1)]
            if moved != sorted(moved):
                continue
            target = []
            for j, i in enumerate(perm):
                d = dims[i]
                if isinstance(d, int) and d > 0:
                    target.append(d)
                elif i == j and not isinstance(d, int):
                    target.append(0)  # a symbolic dim that stays where it is: Reshape copies it
                else:
                    break
            else:
                if target.count(0) > 1 and -1 in target:
                    continue
                shape = self._const(np.asarray(target, dtype=np.int64), node)
                src, prev = x, x.producer()
                if (prev is not None and prev.op_type == "Reshape" and not prev.domain and len(x.uses()) == 1
                        and not x.is_graph_output() and prev.inputs[0] is not None and prev.inputs[0].shape is not None
                        and all(t != 0 or (j < len(prev.inputs[0].shape) and prev.inputs[0].shape[j] == dims[j])
                                for j, t in enumerate(target))):
                    src = prev.inputs[0]  # Reshape of a Reshape: one Reshape from the first one's input
                new = ir.Node("", "Reshape", [src, shape], name=self._fresh(f"{node.name}/as_reshape"))
                out = node.outputs[0]
                new.outputs[0].name = self._fresh(f"{out.name}_reshaped")
                dtype = out.dtype if out.dtype is not None else x.dtype
                if dtype is not None:
                    new.outputs[0].dtype = dtype
                    new.outputs[0].shape = out.shape if out.shape is not None else ir.Shape(
                        [dims[i] for i in perm])
                self.graph.insert_before(node, new)
                if out.is_graph_output():
                    continue
                out.replace_all_uses_with(new.outputs[0])
                self.graph.remove(node, safe=True)
                if src is not x:
                    _drop_dead_chain(self.graph, prev)
                self.changes += 1


#: elementwise ops whose result is boolean whatever their operands
_PREDICATES = {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "IsInf", "IsNaN"}


def _set_type(v: ir.Value, dtype: ir.DataType | None, shape: Any) -> None:
    """Give a rewritten value its type and shape where they are known (never an empty type)."""
    if dtype is None:
        return
    v.dtype = dtype
    if shape is not None:
        v.shape = ir.Shape(shape) if isinstance(shape, (list, tuple)) else (
            shape if isinstance(shape, ir.Shape) else ir.Shape(list(shape)))


def _result_dtype(node: ir.Node) -> ir.DataType | None:
    """The element type of a rewritten op's result, from its (already rewritten) inputs."""
    if node.op_type in _PREDICATES:
        return ir.DataType.BOOL
    if node.op_type == "Cast":
        return ir.DataType(int(node.attributes["to"].value))
    data = node.inputs[1:] if node.op_type == "Where" else node.inputs[:1]
    return next((v.dtype for v in data if v is not None and v.dtype is not None), None)


def _moved_shape(node: ir.Node, old: ir.Shape | None, perm: list[int]) -> ir.Shape | list[Any] | None:
    """The shape of a rewritten op's result in its new layout: the old one permuted, else worked
    out from its input for the ops that keep or pad its shape."""
    if old is not None:
        if len(old) != len(perm):
            return None
        inv = _inverse(perm)
        return ir.Shape([old[inv[i]] for i in range(len(perm))])
    x = node.inputs[0]
    if x is None or x.shape is None:
        return None
    if node.op_type == "Pad":
        pads = _constant(node.inputs[1])
        dims = _static_shape(x)
        if pads is None or dims is None:
            return None
        pads = np.asarray(pads).reshape(-1)
        return [d + int(pads[i]) + int(pads[len(dims) + i]) for i, d in enumerate(dims)]
    if node.op_type == "Softmax" or (node.op_type in _ELEMENTWISE and len(node.inputs) == 1):
        return x.shape
    return None


def _through_reshapes(v: ir.Value) -> ir.Value:
    """The 1-D source of a chain of Reshape / Squeeze / Unsqueeze / Identity (or ``v``)."""
    while True:
        node = v.producer()
        if node is None or node.op_type not in ("Reshape", "Squeeze", "Unsqueeze", "Identity") or node.domain:
            return v
        src = node.inputs[0]
        if src is None or src.shape is None or v.shape is None:
            return v
        if len(src.shape) == 1:
            return src
        v = src


def _drop_dead_chain(graph: ir.Graph, node: ir.Node) -> None:
    """Remove ``node`` and the producers feeding only it, once nothing reads them."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.graph is None or any(o.uses() or o.is_graph_output() for o in n.outputs):
            continue
        ins = [v.producer() for v in n.inputs if v is not None and v.producer() is not None]
        graph.remove(n, safe=True)
        stack.extend(ins)


def push_transposes(model: ir.Model) -> int:
    """Run the layout pass on ``model``'s main graph in place; returns the number of rewrites."""
    opset = model.opset_imports.get("", 18)
    return _Pass(model.graph, opset).run()


def count_transposes(model: ir.Model) -> int:
    """How many Transpose nodes the main graph has."""
    return sum(1 for n in model.graph if n.op_type == "Transpose")
