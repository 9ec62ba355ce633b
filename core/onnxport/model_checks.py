"""Checks of a whole model that the core runs in ``prepare`` before any backend sees the model,
so that every backend refuses the same files with the same :class:`~onnxport.errors.ModelError`."""

from __future__ import annotations

from collections.abc import Iterable

import onnx_ir as ir

from .driver import node_label
from .errors import ModelError


def check_function_calls(model: ir.Model, graphs: Iterable[ir.Graph]) -> None:
    """Refuse a call of a model-local function with more inputs or outputs than the function
    declares (onnx-ir's inliner would fail with a bare ValueError, a kept call at run time)."""
    functions = model.functions
    if not functions:
        return
    for graph in graphs:
        for node in graph:
            function = functions.get((node.domain, node.op_type, getattr(node, "overload", "") or ""))
            if function is None:
                continue
            n_in, n_out = len(function.inputs), len(function.outputs)
            if len(node.inputs) > n_in or len(node.outputs) > n_out:
                raise ModelError(
                    f"node {node_label(node)} calls function {function.domain}::{function.name} with "
                    f"{len(node.inputs)} inputs and {len(node.outputs)} outputs; it declares {n_in} "
                    f"inputs and {n_out} outputs"
                )
