"""The framework-free part of the ``ctx`` an import primitive receives.

Each backend subclasses :class:`NodeContext` with what its framework adds (torch: module-builder
access to weights; JAX: PRNG keys and concrete values); the static facts about the node, fixed at
import time, and the error naming it are the same everywhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import numpy as np
import onnx_ir as ir

from ..errors import ConversionError
from .plan import node_label

Shape = tuple[int | str | None, ...]


def value_shape(v: ir.Value | None) -> Shape | None:
    """A value's static shape: ints, symbolic dim names, None for unknown dims (None: no shape)."""
    if v is None:
        return None
    shape = v.shape
    if shape is None:
        return None
    dims = shape.dims
    for d in dims:
        if not isinstance(d, int):
            return tuple(d if isinstance(d, int) else getattr(d, "value", None) for d in dims)
    return dims  # all static (the common case): already the tuple of ints


class Mode:
    """Train/eval flag shared by an imported object and its node contexts."""

    __slots__ = ("training",)

    def __init__(self, training: bool = False) -> None:
        self.training = training


class NodeContext:
    """Static facts about one node, fixed at import time.

    Primitives run with framework values; ``ctx`` tells them what the model knew when it was
    imported: import-time values of constant inputs (shapes, indices), ONNX dtypes and shapes,
    the node's name, opset, version and outputs; :meth:`error` names the node.
    """

    def __init__(self, node: ir.Node, opset: int, version: int, consts: Mapping[int, np.ndarray] | None = None):
        inputs, outputs = node.inputs, node.outputs
        self.name: str = node.name or ""
        self.label: str = node_label(node)
        self.op_type: str = node.op_type
        self.domain: str = node.domain
        self.opset: int = opset
        self.version: int = version
        self.num_inputs: int = len(inputs)
        self.num_outputs: int = len(outputs)
        in_dtypes, in_shapes = [], []
        for v in inputs:
            if v is None:
                in_dtypes.append(None)
                in_shapes.append(None)
            else:
                in_dtypes.append(v.dtype)
                in_shapes.append(value_shape(v))
        self.input_dtypes: tuple[ir.DataType | None, ...] = tuple(in_dtypes)
        self.input_shapes = tuple(in_shapes)
        self.output_dtypes: tuple[ir.DataType | None, ...] = tuple([v.dtype for v in outputs])
        self.output_shapes = tuple([value_shape(v) for v in outputs])
        self.outputs_used: tuple[bool, ...] = tuple(
            [bool(v.name) and (v.is_graph_output() or bool(v.uses())) for v in outputs]
        )
        self._consts: dict[int, np.ndarray] = dict(consts) if consts else {}

    def const(self, i: int) -> np.ndarray | None:
        """The import-time value of non-trainable input ``i`` (shape, index, constant) or None."""
        return self._consts.get(i)

    def input_dtype(self, i: int) -> ir.DataType | None:
        return self.input_dtypes[i] if i < len(self.input_dtypes) else None

    def output_dtype(self, i: int = 0) -> ir.DataType | None:
        return self.output_dtypes[i] if i < len(self.output_dtypes) else None

    def input_shape(self, i: int) -> Shape | None:
        """Static shape of input ``i`` (ints, symbolic names, or None), if known."""
        return self.input_shapes[i] if i < len(self.input_shapes) else None

    def output_used(self, i: int) -> bool:
        """Whether output ``i`` exists and is read by anything."""
        return i < len(self.outputs_used) and self.outputs_used[i]

    def error(self, message: str) -> ConversionError:
        """A ConversionError naming this node: ``raise ctx.error("...")``."""
        return ConversionError(f"node {self.label} (opset {self.opset}): {message}")

    @contextlib.contextmanager
    def raising(self) -> Iterator[None]:
        """Inside, a ValueError (how the core's framework-free op maths refuses bad attributes
        or inputs) becomes :meth:`error` naming this node: ``with ctx.raising(): ...``."""
        try:
            yield
        except ValueError as exc:
            raise self.error(str(exc)) from exc

    def __repr__(self) -> str:
        return f"NodeContext({self.label}, version={self.version})"
