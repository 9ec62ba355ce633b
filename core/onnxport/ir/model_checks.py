"""Checks of a whole model that the core runs in ``prepare`` before any backend sees the model,
so that every backend refuses the same files with the same :class:`~onnxport.errors.ModelError`."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import onnx_ir as ir

from ..errors import ModelError
from .walk import node_label


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


def check_constant_types(graphs: Iterable[ir.Graph]) -> bool:
    """Replace a declared type (``value_info``, graph output) that contradicts what a ``Constant``
    node produces (an element type or a static shape other than its tensor's) by the tensor's own,
    with a warning naming the value: a declaration never changes what is computed, and onnxruntime
    runs such files (the model builder writes them). Returns whether a declared type was replaced."""
    changed = False
    for graph in graphs:
        for node in graph:
            if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or not node.outputs:
                continue
            attr = node.attributes.get("value") if node.attributes else None
            out = node.outputs[0]
            if attr is None or attr.type != ir.AttributeType.TENSOR or out.type is None:
                continue
            tensor = attr.value
            declared_shape = out.shape
            shape_ok = declared_shape is None or len(declared_shape) != len(tensor.shape) or all(
                not isinstance(d, int) or d == t for d, t in zip(declared_shape.dims, tensor.shape.dims))
            shape_ok = shape_ok and (declared_shape is None or len(declared_shape) == len(tensor.shape))
            if out.dtype == tensor.dtype and shape_ok:
                continue
            text = (f"the model declares a type the graph contradicts: value {out.name!r} as {out.dtype} "
                    f"{declared_shape}, but node {node_label(node)} produces {tensor.dtype} {tensor.shape}")
            warnings.warn(text + "; the constant's own type is used", stacklevel=4)
            out.type, out.shape = ir.TensorType(tensor.dtype), ir.Shape(tensor.shape.dims)
            changed = True
    return changed
