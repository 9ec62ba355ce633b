"""Moving Transposes down through element-wise ops and reductions, so that pairs meet and cancel.

An exporter from a channels-last framework (Flax, Keras) wraps each convolution or pooling in a
Transpose to NCHW and one back. Between two such layers sit element-wise ops (bias add, batch
norm arithmetic, activations, residual adds): :func:`push_transposes` rewrites
``E(Transpose(x), c)`` as ``Transpose(E(x, c'))`` where every other operand ``c`` is a scalar,
a value with at most one dim other than 1 (a bias row: ``c'`` is it reshaped to ``x``'s layout)
or a Transpose with the same permutation, and ``Reduce*(Transpose(x))`` as a reduction of ``x``
over the permuted axes (followed by a Transpose only where the kept dims change order). The
optimizer's Transpose composition then removes each pair that meets. Framework-free.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

#: element-wise ops whose every input broadcasts against the others (output in the same layout)
ELEMENTWISE = {
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Where", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Relu", "Sigmoid", "Tanh", "Neg", "Abs",
    "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Cast", "Sin", "Cos", "Floor", "Ceil", "Not",
    "IsNaN", "IsInf", "Sign", "Round", "Softplus", "LeakyRelu", "Elu", "Selu", "HardSigmoid",
    "Identity", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
}
REDUCTIONS = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"}


def _perm(node: ir.Node) -> list[int] | None:
    a = node.attributes.get("perm")
    return None if a is None else [int(p) for p in a.value]


def _transpose_of(v: ir.Value | None) -> tuple[ir.Value, list[int]] | None:
    node = v.producer() if v is not None else None
    if node is None or node.op_type != "Transpose" or node.domain:
        return None
    perm = _perm(node)
    return (node.inputs[0], perm) if perm is not None else None


def _static(v: ir.Value) -> list[int] | None:
    if v.shape is None or not all(isinstance(d, int) for d in v.shape):
        return None
    return [int(d) for d in v.shape]


def _const_ints(v: ir.Value | None) -> list[int] | None:
    if v is None or v.const_value is None:
        return None
    return [int(a) for a in np.asarray(v.const_value.numpy()).reshape(-1)]


def _constant(graph: ir.Graph, before: ir.Node, arr: np.ndarray, name: str) -> ir.Value:
    node = ir.Node("", "Constant", [], attributes=[ir.AttrTensor("value", ir.tensor(arr))])
    out = node.outputs[0]
    out.name, out.const_value, out.dtype, out.shape = name, ir.tensor(arr), ir.DataType.INT64, ir.Shape(list(arr.shape))
    graph.insert_before(before, node)
    return out


def _rewrite_elementwise(graph: ir.Graph, node: ir.Node, taken: set[str]) -> bool:
    rank, perm = None, None
    for v in node.inputs:
        t = _transpose_of(v)
        if t is not None:
            rank, perm = len(t[1]), t[1]
            break
    if perm is None or len(node.outputs) != 1:
        return False
    inv = [perm.index(i) for i in range(rank)]
    plan: list[tuple[str, object]] = []
    for v in node.inputs:
        if v is None:
            plan.append(("none", None))
            continue
        t = _transpose_of(v)
        if t is not None and t[1] == perm:
            plan.append(("src", t[0]))
            continue
        shape = _static(v)
        if shape is None or len(shape) > rank or sum(d != 1 for d in shape) > 1:
            return False
        if all(d == 1 for d in shape) and len(shape) <= rank:
            plan.append(("keep", v))
            continue
        full = [1] * (rank - len(shape)) + shape
        plan.append(("reshape", (v, [full[inv[j]] for j in range(rank)])))
    if not any(kind == "src" for kind, _ in plan):
        return False
    ins: list[ir.Value | None] = []
    for kind, item in plan:
        if kind == "none":
            ins.append(None)
        elif kind in ("src", "keep"):
            ins.append(item)  # type: ignore[arg-type]
        else:
            v, shape = item  # type: ignore[misc]
            target = _constant(graph, node, np.asarray(shape, dtype=np.int64), _fresh(taken, f"{v.name}_shape"))
            r = ir.Node("", "Reshape", [v, target])
            r.outputs[0].name = _fresh(taken, f"{v.name}_nchw")
            r.outputs[0].dtype, r.outputs[0].shape = v.dtype, ir.Shape(shape)
            graph.insert_before(node, r)
            ins.append(r.outputs[0])
    out = node.outputs[0]
    moved = ir.Node(node.domain, node.op_type, ins, attributes=list(node.attributes.values()), name=node.name)
    moved.outputs[0].name = _fresh(taken, f"{out.name}_nchw")
    if out.dtype is not None:
        moved.outputs[0].dtype = out.dtype
    if out.shape is not None and len(out.shape) == rank:
        moved.outputs[0].shape = ir.Shape([out.shape[inv[j]] for j in range(rank)])
    back = ir.Node("", "Transpose", [moved.outputs[0]], attributes=[ir.AttrInt64s("perm", perm)],
                   name=f"{node.name}_transpose" if node.name else None)
    graph.insert_before(node, [moved, back])
    _take_over(graph, out, back.outputs[0])
    graph.remove(node, safe=True)
    return True


def _rewrite_reduction(graph: ir.Graph, node: ir.Node, taken: set[str]) -> bool:
    t = _transpose_of(node.inputs[0])
    if t is None or len(node.inputs) < 2 or len(node.outputs) != 1:
        return False
    x, perm = t
    axes = _const_ints(node.inputs[1])
    if axes is None or not axes:
        return False
    rank = len(perm)
    axes = [a + rank if a < 0 else a for a in axes]
    keep = node.attributes.get("keepdims")
    keepdims = 1 if keep is None else int(keep.value)
    new_axes = sorted(perm[a] for a in axes)
    target = _constant(graph, node, np.asarray(new_axes, dtype=np.int64), _fresh(taken, f"{node.inputs[1].name}_nchw"))
    attrs = [a for a in node.attributes.values()]
    moved = ir.Node(node.domain, node.op_type, [x, target, *node.inputs[2:]], attributes=attrs, name=node.name)
    out = node.outputs[0]
    moved.outputs[0].name = _fresh(taken, f"{out.name}_nchw")
    if out.dtype is not None:
        moved.outputs[0].dtype = out.dtype
    if keepdims:
        order = perm  # the reduced dims stay (size 1): the same permutation brings them back
    else:
        kept_t = [i for i in range(rank) if i not in axes]          # the output's dims, from t
        kept_x = [perm[i] for i in kept_t]                          # the same dims, in x
        ranked = sorted(kept_x)                                     # their order after reducing x
        order = [ranked.index(d) for d in kept_x]
    nodes = [moved]
    result = moved.outputs[0]
    if order != list(range(len(order))):
        back = ir.Node("", "Transpose", [result], attributes=[ir.AttrInt64s("perm", order)])
        nodes.append(back)
        result = back.outputs[0]
    elif out.shape is not None:
        result.shape = out.shape
    graph.insert_before(node, nodes)
    _take_over(graph, out, result)
    graph.remove(node, safe=True)
    return True


def _take_over(graph: ir.Graph, old: ir.Value, new: ir.Value) -> None:
    """``new`` replaces ``old`` everywhere, and takes its name, type and graph-output place."""
    name, dtype, shape = old.name, old.dtype, old.shape
    for i, o in enumerate(graph.outputs):
        if o is old:
            graph.outputs[i] = new
    ir.convenience.replace_all_uses_with(old, new)
    old.name = None
    new.name = name
    if dtype is not None:
        new.dtype = dtype
    if new.shape is None:
        new.shape = shape


def _fresh(taken: set[str], base: str) -> str:
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    taken.add(name)
    return name


def push_transposes(model: ir.Model, *, max_rounds: int = 64) -> int:
    """Move Transposes below element-wise ops and reductions in the main graph (in place); the
    number of ops moved. Run the optimizer afterwards to cancel the pairs that now meet."""
    graph = model.graph
    taken = {v.name for n in graph for v in n.outputs if v.name} | {v.name for v in graph.inputs} | set(graph.initializers)
    moved = 0
    for _ in range(max_rounds):
        changed = False
        for node in list(graph):
            if node.domain or node.graph is not graph:
                continue
            if node.op_type in ELEMENTWISE and any(_transpose_of(v) is not None for v in node.inputs):
                done = _rewrite_elementwise(graph, node, taken)
            elif node.op_type in REDUCTIONS and _transpose_of(node.inputs[0]) is not None:
                done = _rewrite_reduction(graph, node, taken)
            else:
                continue
            if done:
                moved += 1
                changed = True
        _drop_dead_transposes(graph)
        if not changed:
            break
    return moved


def _drop_dead_transposes(graph: ir.Graph) -> None:
    for node in reversed(list(graph)):
        if node.op_type in ("Transpose", "Reshape", "Constant") and not node.domain and all(
                not o.uses() and not o.is_graph_output() for o in node.outputs):
            graph.remove(node, safe=True)
