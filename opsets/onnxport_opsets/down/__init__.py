"""Down-adapters: rewrite nodes written in an op's newest form for an older target opset.

Exporters emit each op once, in its newest form; the core's export pipeline
(:func:`onnxport.exporting.pipeline.downgrade`) then rewrites the nodes that the model's opset does not know
in that form, through the down-adapters in the registry. One module per op family, each function
marked ``@down(op_type, below=version)``: it runs on nodes of ``op_type`` when the model's
default-domain opset is below ``version`` and replaces the node (``DownContext.replace``). The
core defaults plugin (:mod:`onnxport_opsets.plugin`) registers every marked function.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx_ir as ir

from onnxport.errors import ConversionError
from onnxport.exporting.pipeline import DownContext

__all__ = ["DownContext", "const_ints", "down", "marks"]

_MARK = "__onnxport_down__"


def down(op_type: str, *, below: int) -> Callable[[Callable], Callable]:
    """Mark ``fn(node, ctx)`` as the rewrite of ``op_type`` for opsets below ``below``."""

    def mark(fn: Callable) -> Callable:
        setattr(fn, _MARK, [*getattr(fn, _MARK, []), (op_type, below)])
        return fn

    return mark


def marks(obj: object) -> list[tuple[str, int]]:
    """The ``(op_type, below)`` pairs ``obj`` is marked with by :func:`down`."""
    return list(getattr(obj, _MARK, None) or [])


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
