"""Model-local ONNX functions as reusable submodules.

A ``FunctionProto`` is compiled once into an ``fx.GraphModule`` (``OnnxFunction``) registered
under ``onnx_functions.<name>``; every node that calls the function becomes a ``call_module`` of
that one submodule. Weights reach a function as inputs, so the caller's Parameters stay shared and
their gradients add up over the call sites. Constants inside the body become non-persistent
buffers of the function module. Functions with attribute parameters never get here: the core
inlines their calls (``onnxport.importing.plan.prepare``).
"""

from __future__ import annotations

import operator
from typing import Any

import onnx_ir as ir
import torch.fx as fx
from torch import nn

from onnxport.errors import ConversionError

from .import_graph import GraphBuilder, ImportState, annotate, called_modules
from .runtime import name_part


def function_key(node: ir.Node) -> tuple[str, str, str]:
    """The key of the model-local function a node would call."""
    return (node.domain, node.op_type, getattr(node, "overload", "") or "")


def is_function_call(builder: GraphBuilder, node: ir.Node) -> bool:
    """Whether ``node`` calls a function kept in the model (not inlined)."""
    return function_key(node) in builder.state.plan.model.functions


class FunctionBuilder(GraphBuilder):
    """Builds a function body; static values it needs become the function's own buffers."""

    def __init__(self, state: ImportState, graph: ir.Graph, owner: nn.Module, parent: GraphBuilder):
        super().__init__(state, graph, parent)
        self.owner = owner
        self._consts: dict[ir.Value, fx.Node] = {}

    def value_node(self, v: ir.Value) -> Any:
        if v in self.env:
            return self.env[v]
        if v in self.state.static:
            if v not in self._consts:
                name = name_part(f"const_{v.name or len(self._consts)}")
                while hasattr(self.owner, name):
                    name += "_"
                self.owner.register_buffer(name, self.state.static[v], persistent=False)
                self._consts[v] = self.fx.get_attr(name)
            return self._consts[v]
        raise ConversionError(f"value {v.name!r} is not defined in function {self.graph.name!r}")


def call_function(builder: GraphBuilder, node: ir.Node) -> None:
    """Emit a call of the (once compiled) function module for call site ``node``."""
    st = builder.state
    key = function_key(node)
    function = st.plan.model.functions[key]
    if key not in st.functions:
        owner = nn.Module()
        child = FunctionBuilder(st, function.graph, owner, builder)
        outs = child.build(list(function.graph.inputs), [])
        child.fx.output(tuple(outs))
        name = name_part(f"{function.domain}_{function.name}{'_' + function.overload if function.overload else ''}")
        # a function body calling another kept function finds it in its own module
        module = fx.GraphModule(called_modules(child.fx, st.root, owner), child.fx, class_name=f"OnnxFunction_{name}")
        module.onnx_function = f"{function.domain}::{function.name}"  # type: ignore[assignment]
        path = st.unique_path(f"onnx_functions.{name}")
        st.set_attr(path, module, "module")
        st.functions[key] = (path, len(function.graph.inputs), len(function.graph.outputs))
    path, n_in, n_out = st.functions[key]
    if len(node.inputs) > n_in:
        raise ConversionError(
            f"node {node.name!r} calls function {function.domain}::{function.name} with "
            f"{len(node.inputs)} inputs; it takes {n_in}"
        )
    args = [builder.value_node(v) if v is not None else None for v in node.inputs]
    args += [None] * (n_in - len(args))
    out = builder.fx.call_module(path, tuple(args))
    annotate(out, node)
    for i, v in enumerate(node.outputs[:n_out]):
        item = builder.fx.call_function(operator.getitem, (out, i))
        builder.env[v] = item


__all__ = ["FunctionBuilder", "call_function", "function_key", "is_function_call"]

