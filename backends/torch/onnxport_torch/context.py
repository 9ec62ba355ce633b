"""The per-node context a torch import primitive receives as ``ctx``."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import onnx_ir as ir
import torch

from onnxport.errors import ConversionError, OnnxportError
from onnxport.importing import context as _core

from . import dtypes

_CONST_INTS = 4096  # elements: larger integer constants are read through numpy when used


class ImportFacts(Protocol):
    """What a node context asks the graph builder at import time (``import_graph.GraphBuilder``)."""

    def is_trainable(self, v: ir.Value) -> bool: ...

    def static_value(self, v: ir.Value) -> torch.Tensor | None: ...

    def is_weight(self, v: ir.Value) -> bool: ...

    def weight(self, v: ir.Value, register: bool = True) -> torch.Tensor: ...


class Mode(_core.Mode):
    """Train/eval flag shared by an imported module and its node contexts (training at first)."""

    __slots__ = ("import_dtype", "float_dtype")

    def __init__(self) -> None:
        super().__init__(training=True)
        #: the float dtype the model computes in as imported, and the one it computes in now
        #: (after ``.half()``, ``.double()``, ``.to(dtype)``: float tensors the graph makes in the
        #: imported dtype are made in this one)
        self.import_dtype: torch.dtype = torch.float32
        self.float_dtype: torch.dtype = torch.float32

    def compute_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """``dtype``, or the module's float dtype where ``dtype`` is the imported one."""
        return self.float_dtype if dtype == self.import_dtype else dtype


class NodeContext(_core.NodeContext):
    """Static facts about one node, fixed at import time (:class:`onnxport.importing.context.NodeContext`).

    Primitives run at call time with real tensors; ``ctx`` tells them what the model knew when
    it was imported: static values of non-trainable inputs (shapes, indices, constants), ONNX
    dtypes and shapes, the node's name, opset and number of outputs. ``is_initializer`` and
    ``param`` are for module builders, which run once at import time.
    """

    def __init__(self, builder: ImportFacts, node: ir.Node, opset: int, version: int, mode: Mode):
        inputs = node.inputs
        consts: dict[int, np.ndarray] = {}
        for i, v in enumerate(inputs):
            if v is not None and not builder.is_trainable(v):
                t = builder.static_value(v)
                if t is not None:
                    consts[i] = dtypes.to_numpy(t, v.dtype)
        super().__init__(node, opset, version, consts)
        #: ConstantOfShape's fill as a tensor made at import (torch.compile does not trace numpy)
        self.fill: torch.Tensor | None = None
        if node.op_type == "ConstantOfShape" and "value" in node.attributes:
            try:
                self.fill = dtypes.tensor_from_ir(node.attributes["value"].value).reshape(-1)
            except (OnnxportError, RuntimeError, AttributeError):
                self.fill = None
        #: small integer constants as Python ints, read without numpy (which torch.compile would trace)
        self.const_ints: dict[int, list[int]] = {
            i: [int(x) for x in c.reshape(-1).tolist()] for i, c in consts.items()
            if c.dtype.kind in "iub" and c.size <= _CONST_INTS}
        self._builder: ImportFacts | None = builder
        self._inputs = list(inputs)
        self._mode = mode

    def _freeze(self) -> None:
        """Drop import-time references once the module is built."""
        self._builder = None
        self._inputs = []

    def output_torch_dtype(self, i: int = 0) -> torch.dtype | None:
        dt = self.output_dtype(i)
        try:
            return dtypes.to_torch_dtype(dt) if dt is not None else None
        except ConversionError:
            return None

    def compute_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype a tensor the graph makes in ``dtype`` has now (see :class:`Mode`)."""
        return self._mode.compute_dtype(dtype)

    @property
    def training(self) -> bool:
        """Whether the imported module is in training mode (Dropout, BatchNormalization)."""
        return self._mode.training

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

    def _live(self) -> ImportFacts:
        if self._builder is None:
            raise self.error("import-time facts asked for after the import finished")
        return self._builder



def ints(ctx: NodeContext, i: int, tensor: Any) -> list[int] | None:
    """Input ``i`` as a list of ints: from the import-time value, else from the runtime tensor."""
    if tensor is None:
        return None
    if type(tensor) is list:  # a shape program's ints (runtime.ShapeProgram), symbolic when traced
        return tensor
    known = ctx.const_ints.get(i)
    if known is not None:
        return list(known)
    c = ctx.const(i)
    if c is not None:
        return [int(v) for v in np.asarray(c).reshape(-1)]
    return [int(v) for v in tensor.reshape(-1).tolist()]
