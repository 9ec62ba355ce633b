"""Down-adapters: rewrite nodes written in an op's newest form for an older target opset.

Exporters emit each op once, in its newest form; :func:`downgrade` then rewrites the nodes
that the model's opset does not know in that form. One module per op family, each function
marked ``@down(op_type, below=version)``: it runs on nodes of ``op_type`` when the model's
default-domain opset is below ``version`` and replaces the node (``DownContext.replace``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir

from onnxport.driver import iter_graphs
from onnxport.errors import ConversionError

_MARK = "__onnxport_down__"


def down(op_type: str, *, below: int) -> Callable[[Callable], Callable]:
    """Mark ``fn(node, ctx)`` as the rewrite of ``op_type`` for opsets below ``below``."""

    def mark(fn: Callable) -> Callable:
        setattr(fn, _MARK, [*getattr(fn, _MARK, []), (op_type, below)])
        return fn

    return mark


class DownContext:
    """Node creation and replacement inside one graph, for a down-adapter."""

    def __init__(self, graph: ir.Graph, opset: int):
        self.graph = graph
        self.opset = opset
        self._new: list[ir.Node] = []
        self._count = 0

    def op(self, op_type: str, *inputs: ir.Value | None, outputs: int = 1, **attributes: Any) -> Any:
        """A new node (inserted before the node being replaced); its output value(s)."""
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attributes.items() if v is not None}
        node = ir.Node("", op_type, list(inputs), attributes=ir.convenience.convert_attributes(attrs), num_outputs=outputs)
        self._new.append(node)
        return node.outputs[0] if outputs == 1 else tuple(node.outputs)

    def const(self, value: Any, dtype: Any = None) -> ir.Value:
        arr = np.asarray(value, dtype=dtype)
        tensor = ir.tensor(arr)
        out = self.op("Constant", value=tensor)
        out.const_value = tensor
        return out

    def replace(self, node: ir.Node, outputs: list[ir.Value]) -> None:
        """Put the nodes made since the last call where ``node`` was; ``outputs`` take its place."""
        base = node.name or node.op_type
        for i, new in enumerate(self._new):
            new.name = f"{base}/{new.op_type}_{i}"
            new.metadata_props.update(node.metadata_props)
            for out in new.outputs:
                if out.name is None:
                    self._count += 1
                    out.name = f"{base}_down_{self._count}"
        self.graph.insert_before(node, self._new)
        self._new = []
        for old, new in zip(node.outputs, outputs):
            name = old.name
            new.type, new.shape = old.type, old.shape
            old.replace_all_uses_with(new, replace_graph_outputs=True)
            old.name = None
            new.name = name
        self.graph.remove(node, safe=True)


def const_ints(value: ir.Value | None, node: ir.Node) -> list[int] | None:
    """The ints of a constant input (None when the input is missing)."""
    if value is None:
        return None
    tensor = value.const_value
    if tensor is None:
        raise ConversionError(
            f"node {node.name!r} ({node.op_type}): input {value.name!r} must be a constant to "
            "write this op for an older opset"
        )
    return [int(v) for v in np.asarray(tensor.numpy()).reshape(-1)]


def _rules() -> dict[str, list[tuple[int, Callable]]]:
    rules: dict[str, list[tuple[int, Callable]]] = {}
    for info in pkgutil.iter_modules(__path__, prefix=__name__ + "."):
        mod = importlib.import_module(info.name)
        for obj in vars(mod).values():
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            for op_type, below in getattr(obj, _MARK, []) or []:
                rules.setdefault(op_type, []).append((below, obj))
    return rules


def downgrade(model: ir.Model) -> int:
    """Rewrite every node whose newest form the model's opset lacks; returns the count."""
    opset = model.opset_imports.get("", None)
    if opset is None:
        return 0
    rules = _rules()
    count = 0
    for graph in list(iter_graphs(model.graph)):
        ctx = DownContext(graph, opset)
        for node in list(graph):
            if node.domain:
                continue
            for below, fn in rules.get(node.op_type, []):
                if opset < below:
                    fn(node, ctx)
                    count += 1
                    break
        if count:
            _drop_dead_constants(graph)
    return count


def _drop_dead_constants(graph: ir.Graph) -> None:
    """Remove Constant nodes whose values the rewritten nodes no longer read."""
    for node in reversed(list(graph)):
        if node.op_type == "Constant" and not node.domain:
            out = node.outputs[0]
            if not out.uses() and not out.is_graph_output():
                graph.remove(node, safe=True)
