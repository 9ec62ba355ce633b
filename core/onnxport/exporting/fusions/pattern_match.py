"""What the pattern fusions (:mod:`onnxport.exporting.fusions.patterns`) share: reading ONNX nodes (the producer
of a value, constants, scalars, sole readers) and the rewriter that inserts fused nodes, names
them and drops what they replaced, in a main graph, a subgraph or a function body."""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir

from ..builder import array_tensor, first_free

#: ops the fusions look through when a value is only reshaped to broadcast (keepdims forms)
_RESHAPES = {"Reshape", "Unsqueeze", "Squeeze"}


def _node(v: ir.Value | None, op: str | set[str]) -> ir.Node | None:
    """The default-domain node of type ``op`` producing ``v``."""
    if v is None:
        return None
    n = v.producer()
    if n is None or n.domain not in ("", "ai.onnx"):
        return None
    return n if (n.op_type == op if isinstance(op, str) else n.op_type in op) else None


def _const(v: ir.Value | None) -> np.ndarray | None:
    """The value of an initializer or a Constant node's output (its ``value`` attribute read
    where the value carries none, as in a model that was loaded rather than built)."""
    if v is None:
        return None
    n = v.producer()
    if n is not None and (n.op_type != "Constant" or n.domain):
        return None
    if n is None and not v.is_initializer():
        return None
    if v.const_value is not None:
        return v.const_value.numpy()
    if n is None:
        return None
    for name, attr in n.attributes.items():
        if name == "value" and attr.type == ir.AttributeType.TENSOR:
            return attr.value.numpy()
        if name in ("value_float", "value_floats"):
            return np.asarray(attr.value, np.float32)
        if name in ("value_int", "value_ints"):
            return np.asarray(attr.value, np.int64)
    return None


def _scalar(v: ir.Value | None) -> float | None:
    a = _const(v)
    if a is None or a.size != 1 or a.dtype.kind not in "fiu":
        return None
    return float(a.reshape(()))


def _is(v: ir.Value | None, value: float, rtol: float = 1e-3) -> bool:
    s = _scalar(v)
    return s is not None and math.isclose(s, value, rel_tol=rtol, abs_tol=1e-12)


def _other(node: ir.Node, v: ir.Value) -> ir.Value | None:
    """The operand of a binary ``node`` that is not ``v``."""
    a, b = node.inputs[0], node.inputs[1]
    return b if a is v else a if b is v else None


def _peel(v: ir.Value) -> ir.Value:
    """``v`` through Reshape / Unsqueeze / Squeeze nodes."""
    while (n := _node(v, _RESHAPES)) is not None:
        v = n.inputs[0]
    return v


def _dims(v: ir.Value) -> list | None:
    return None if v.shape is None else list(v.shape)


def _sole_use(v: ir.Value) -> ir.Node | None:
    """The one node reading ``v`` (once), when ``v`` is no graph output."""
    uses = list(v.uses())
    if len(uses) != 1 or v.is_graph_output():
        return None
    return uses[0].node


class _Rewriter:
    """Rewrites in one graph: the main graph, a subgraph (If branch, Loop/Scan body) or a
    model-local function's body; ``taken``: the names in use in the whole model (shared)."""

    def __init__(self, graph: ir.Graph, opset: int, taken: set[str] | None = None, main: bool = True):
        self.graph, self.opset, self.main = graph, opset, main
        self.taken = _names(graph) if taken is None else taken
        #: initializers some node read before fusing (those no node reads afterwards go)
        self.read_at_start = {name for name, v in graph.initializers.items() if v.uses()}

    def name(self, base: str) -> str:
        name = first_free(base, self.taken)
        self.taken.add(name)
        return name

    def initializer(self, base: str, arr: np.ndarray) -> ir.Value:
        """A constant: an initializer of the main graph, a Constant node elsewhere (the exporters
        keep subgraphs free of initializers; a function has none)."""
        name = self.name(base)
        tensor = array_tensor(arr, name=name)
        if not self.main:
            node = ir.node("Constant", [], attributes={"value": tensor}, name=self.name(f"{base}_constant"))
            v = node.outputs[0]
            v.name, v.const_value = name, tensor
            v.dtype, v.shape = tensor.dtype, ir.Shape(list(arr.shape))
            first = next(iter(self.graph), None)
            if first is None:
                self.graph.append(node)
            else:
                self.graph.insert_before(first, node)
            return v
        v = ir.Value(name=name, type=ir.TensorType(ir.DataType.from_numpy(arr.dtype)), shape=ir.Shape(list(arr.shape)),
                     const_value=tensor)
        self.graph.register_initializer(v)
        return v

    def replace(self, last: ir.Node, op: str, inputs: list[ir.Value | None], **attrs) -> ir.Node:
        """A node ``op`` computing ``last``'s output, placed before it; ``last`` and the nodes
        only it read are removed later (dead)."""
        old = last.outputs[0]
        node = ir.node(op, inputs, attributes=attrs, name=self.name(f"{last.name or op}_{op}"))
        out = node.outputs[0]
        if old.dtype is not None:  # an untyped value (a loaded function body) stays untyped
            out.dtype = old.dtype
        out.shape = old.shape
        self.graph.insert_before(last, node)
        ir.convenience.replace_all_uses_with(old, out, replace_graph_outputs=True)
        name = old.name  # the fused value keeps the name (graph outputs keep theirs)
        old.name = self.name(f"{name}_unfused")
        out.name = name
        return node

    def param(self, v: ir.Value, shape: list, reshape_only: bool = False) -> ir.Value | None:
        """``v`` as an array of ``shape`` (a layer's scale/bias broadcast with leading ones);
        ``reshape_only``: only a value that Reshape nodes broadcast (per-channel statistics)."""
        cand = v
        while True:
            if _dims(cand) == shape:
                return cand
            n = _node(cand, _RESHAPES)
            if n is None:
                break
            cand = n.inputs[0]
        a = _const(v)
        if a is not None and a.size == int(np.prod(shape)) and not reshape_only:
            return self.initializer(f"{v.name}_reshaped", a.reshape(shape))
        return None

    def dead(self) -> None:
        graph = self.graph

        def unused(node: ir.Node) -> bool:
            return node.graph is graph and all(not o.uses() and not o.is_graph_output() for o in node.outputs)

        # a worklist: removing a node can only make the producers of what it read unused
        todo = [n for n in graph if unused(n)]
        while todo:
            node = todo.pop()
            if not unused(node):
                continue
            read = [v for v in node.inputs if v is not None] + _detach_subgraphs(node)
            graph.remove(node, safe=True)
            todo.extend(p for p in (v.producer() for v in read) if p is not None and unused(p))
        for name, v in list(self.graph.initializers.items()):  # uses(): subgraphs' reads count
            if not any(u.node.graph is not None for u in v.uses()) and not v.is_graph_output() and (
                    v not in self.graph.inputs) and (
                    name in self.created or name in self.read_at_start):
                del self.graph.initializers[name]

    created: set[str] = set()


def _detach_subgraphs(node: ir.Node) -> list[ir.Value]:
    """Make the nodes of ``node``'s subgraphs no readers of any value (so that the outer values
    only they read count as unused once ``node`` goes); returns the values they read."""
    read: list[ir.Value] = []
    for attr in node.attributes.values():
        graphs = [attr.value] if attr.type == ir.AttributeType.GRAPH else (
            list(attr.value) if attr.type == ir.AttributeType.GRAPHS else [])
        for g in graphs:
            for n in ir.traversal.RecursiveGraphIterator(g):
                for i, v in enumerate(n.inputs):
                    if v is not None:
                        read.append(v)
                        n.replace_input_with(i, None)
    return read


def _names(graph: ir.Graph) -> set[str]:
    """The value names of ``graph`` and its subgraphs."""
    names = set(graph.initializers) | {v.name for v in graph.inputs}
    for g in [graph, *graph.subgraphs()]:
        names |= {v.name for v in g.inputs} | {o.name for n in g for o in n.outputs}
    return names


