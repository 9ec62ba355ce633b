"""The per-node context a torch import primitive receives as ``ctx``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import onnx_ir as ir
import torch

from onnxport.driver import node_label
from onnxport.errors import ConversionError

from . import dtypes

if TYPE_CHECKING:
    from .importer import _GraphBuilder


def _shape(v: ir.Value | None) -> tuple[int | str | None, ...] | None:
    if v is None or v.shape is None:
        return None
    return tuple(d if isinstance(d, int) else getattr(d, "value", None) for d in v.shape)


class Mode:
    """Train/eval flag shared by an imported module and its node contexts."""

    __slots__ = ("training",)

    def __init__(self) -> None:
        self.training = True


class NodeContext:
    """Static facts about one node, fixed at import time.

    Primitives run at call time with real tensors; ``ctx`` tells them what the model knew when
    it was imported: static values of non-trainable inputs (shapes, indices, constants), ONNX
    dtypes and shapes, the node's name, opset and number of outputs. ``is_initializer`` and
    ``param`` are for module builders, which run once at import time.
    """

    def __init__(self, builder: _GraphBuilder, node: ir.Node, opset: int, version: int, mode: Mode):
        self._builder: _GraphBuilder | None = builder
        self._inputs = list(node.inputs)
        self.name: str = node.name or ""
        self.label: str = node_label(node)
        self.op_type: str = node.op_type
        self.domain: str = node.domain
        self.opset: int = opset
        self.version: int = version
        self.num_inputs: int = len(node.inputs)
        self.num_outputs: int = len(node.outputs)
        self.input_dtypes: tuple[ir.DataType | None, ...] = tuple(
            v.dtype if v is not None else None for v in node.inputs
        )
        self.output_dtypes: tuple[ir.DataType | None, ...] = tuple(v.dtype for v in node.outputs)
        self.input_shapes = tuple(_shape(v) for v in node.inputs)
        self.output_shapes = tuple(_shape(v) for v in node.outputs)
        self.outputs_used: tuple[bool, ...] = tuple(
            bool(v.name) and (bool(v.uses()) or v.is_graph_output()) for v in node.outputs
        )
        self._consts: dict[int, np.ndarray] = {}
        for i, v in enumerate(node.inputs):
            if v is not None and not builder.is_trainable(v):
                t = builder.static_value(v)
                if t is not None:
                    self._consts[i] = dtypes.to_numpy(t, v.dtype)
        self._mode = mode

    def _freeze(self) -> None:
        """Drop import-time references once the module is built."""
        self._builder = None
        self._inputs = []

    # -- static facts -------------------------------------------------------------------
    def const(self, i: int) -> np.ndarray | None:
        """The import-time value of non-trainable input ``i`` (shape, index, constant) or None."""
        return self._consts.get(i)

    def input_dtype(self, i: int) -> ir.DataType | None:
        return self.input_dtypes[i] if i < len(self.input_dtypes) else None

    def output_dtype(self, i: int = 0) -> ir.DataType | None:
        return self.output_dtypes[i] if i < len(self.output_dtypes) else None

    def output_torch_dtype(self, i: int = 0) -> torch.dtype | None:
        dt = self.output_dtype(i)
        try:
            return dtypes.to_torch_dtype(dt) if dt is not None else None
        except ConversionError:
            return None

    def input_shape(self, i: int) -> tuple[int | str | None, ...] | None:
        """Static shape of input ``i`` (ints, symbolic names, or None), if known."""
        return self.input_shapes[i] if i < len(self.input_shapes) else None

    def output_used(self, i: int) -> bool:
        """Whether output ``i`` exists and is read by anything."""
        return i < len(self.outputs_used) and self.outputs_used[i]

    @property
    def training(self) -> bool:
        """Whether the imported module is in training mode (Dropout, BatchNormalization)."""
        return self._mode.training

    def error(self, message: str) -> ConversionError:
        """A ConversionError naming this node: ``raise ctx.error("...")``."""
        return ConversionError(f"node {self.label} (opset {self.opset}): {message}")

    # -- import time only (module builders) --------------------------------------------------
    def is_initializer(self, i: int) -> bool:
        """Whether input ``i`` is a model weight (initializer-held parameter or buffer)."""
        v = self._inputs[i] if i < len(self._inputs) else None
        return v is not None and self._live().is_weight(v)

    def param(self, i: int) -> torch.Tensor:
        """The shared ``nn.Parameter`` (or buffer) holding weight input ``i``."""
        return self._live().weight(self._inputs[i], register=False)

    def initializer_value(self, i: int) -> torch.Tensor | None:
        """The import-time tensor of weight input ``i``, not registered as a model weight (for
        builders that re-layout a weight into their module's own Parameters)."""
        v = self._inputs[i] if i < len(self._inputs) else None
        return self._live().static_value(v) if v is not None else None

    def weight_name(self, i: int) -> str | None:
        """The ONNX name of input ``i``."""
        v = self._inputs[i] if i < len(self._inputs) else None
        return v.name if v is not None else None

    def _live(self) -> _GraphBuilder:
        if self._builder is None:
            raise self.error("import-time facts asked for after the import finished")
        return self._builder

    def __repr__(self) -> str:
        return f"NodeContext({self.label}, version={self.version})"


def ints(ctx: NodeContext, i: int, tensor: Any) -> list[int] | None:
    """Input ``i`` as a list of ints: from the import-time value, else from the runtime tensor."""
    if tensor is None:
        return None
    c = ctx.const(i)
    if c is not None:
        return [int(v) for v in np.asarray(c).reshape(-1)]
    return [int(v) for v in tensor.reshape(-1).tolist()]
