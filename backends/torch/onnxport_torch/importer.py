"""ONNX -> torch: :func:`import_plan` builds an :class:`OnnxModule`; :class:`TorchBackend` is the
backend object the plugin registers (import, export, native files, testkit conversions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir
import torch
from torch import nn

from onnxport.errors import ConversionError, OnnxportError
from onnxport.importing.inputs import input_spec
from onnxport.importing.plan import ImportPlan, iter_graphs
from onnxport.plugin.backend import Backend

from . import dtypes
from .exporter import ExportSupport
from .functions import call_function
from .hierarchy import restore
from .import_graph import GraphBuilder, ImportState
from .module import OnnxModule
from .runtime import NodeFn, ShapeProgram

_MAX_OUTPUT_BYTES = 1 << 40  # an output past this (an expanded view) cannot become a numpy array


def import_plan(plan: ImportPlan, **options: Any) -> OnnxModule:
    """Build the ``OnnxModule`` for a prepared plan."""
    state = ImportState(plan, {**plan.options, **options}, call_function)
    graph = plan.model.graph
    for g in iter_graphs(graph):
        for v in g.initializers.values():
            if v.const_value is None:
                continue
            try:
                t = dtypes.tensor_from_ir(v.const_value)
            except OnnxportError as exc:
                raise ConversionError(f"initializer {v.name!r}: {exc}") from exc
            if isinstance(v.const_value, ir.ExternalTensor):
                v.const_value.release()  # unmap the file's pages now that torch holds a copy (peak memory)
            state.static[v] = t
            state.from_init.add(v)
    builder = GraphBuilder(state, graph)
    for v in list(state.static):
        t = state.static[v]
        if t.is_floating_point() and state.trainable_mode != "none" and t.dim() >= 1 and builder._is_weight_use(v):
            state.trainable.add(v)
        elif t.is_floating_point() and state.trainable_mode == "all":
            state.trainable.add(v)
    outs = builder.build(list(graph.inputs), [])
    builder.fx.output(outs[0] if len(outs) == 1 else tuple(outs))
    info = {
        "inputs": [input_spec(v) for v in graph.inputs],
        # the sanitized, unique argument names of forward(), accepted as keywords too
        "input_args": [builder.env[v].target for v in graph.inputs],
        "outputs": [v.name for v in graph.outputs],
        "output_dtypes": [v.dtype for v in graph.outputs],
        "weights": dict(state.weights),
        "graph_name": graph.name,
    }
    if state.options.get("hierarchy", True):
        # the exporting model's module tree (issue 3), placed in the module before its graph
        module = OnnxModule.placed(builder.fx, info, state.mode, lambda m: restore(m, state, builder.fx))
    else:
        module = OnnxModule(state.root, builder.fx, info, state.mode)
    module.train(options.get("training", False))
    return module


class TorchBackend(Backend, ExportSupport):
    """The PyTorch backend: ONNX -> ``torch.nn.Module``; ``torch.nn.Module`` -> ONNX (ExportSupport)."""

    name = "torch"

    # -- native files (onnxport convert): see onnxport_torch.native ---------------------------------------
    native_suffixes = (".pt2", ".pt")

    def can_load(self, path: Any) -> bool:
        """Whether ``path`` is a native file or folder this backend reads."""
        from . import native

        return native.can_load(path)

    def save(self, native_obj: Any, path: Any, example_inputs: Any = ()) -> None:
        """Write ``native_obj`` as native files at ``path`` (see :mod:`onnxport_torch.native`)."""
        from . import native

        native.save(native_obj, path, example_inputs)

    def load(self, path: Any) -> Any:
        """The callable native object at ``path``."""
        return self.load_with_inputs(path)[0]

    def load_with_inputs(self, path: Any) -> tuple[Any, tuple[Any, ...]]:
        """The native object at ``path`` and example inputs to export it with."""
        from . import native

        return native.load(path)

    #: model-local functions become reusable submodules (``prepare(keep_functions=...)``)
    keep_functions = True

    @property
    def expected_failures(self) -> dict[str, str]:
        from .expected_failures import EXPECTED_FAILURES

        return EXPECTED_FAILURES

    @property
    def dtypes(self) -> frozenset[ir.DataType]:
        return dtypes.HELD_TYPES

    def import_model(self, plan: ImportPlan, **options: Any) -> OnnxModule:
        return import_plan(plan, **options)

    def to_sequential(self, plan: ImportPlan, **options: Any) -> nn.Sequential:
        """The model as ``nn.Sequential``: flat for a chain, nested :class:`~onnxport_torch.residual.Residual`
        / ``Parallel`` blocks where branches rejoin (``onnxport.to_sequential``)."""
        from onnxport.edit.surgery.blocks import block_structure, is_linear

        from .residual import nested_sequential
        from .sequential import flat_sequential

        structure = block_structure(plan.model)
        full = import_plan(plan, **options)
        return flat_sequential(full) if is_linear(structure) else nested_sequential(full, structure)

    def from_numpy(self, array: np.ndarray) -> torch.Tensor:
        """A torch tensor with exactly the array's values and dtype (ml_dtypes included)."""
        return dtypes.from_numpy(array)

    def to_numpy(self, tensor: torch.Tensor) -> np.ndarray:
        """A numpy array with exactly the tensor's values and dtype."""
        return dtypes.to_numpy(tensor)

    def run(self, module: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Run an imported module on numpy inputs; outputs as numpy (testkit, CLI)."""
        args = [dtypes.from_numpy(a) if isinstance(a, np.ndarray) else a for a in inputs]
        with torch.no_grad():
            out = module(*args)
        outs = list(out) if isinstance(out, tuple) else [out]
        kinds = getattr(module, "_onnx_info", {}).get("output_dtypes") or [None] * len(outs)
        names = getattr(module, "_onnx_info", {}).get("outputs") or [str(i) for i in range(len(outs))]
        result = []
        for o, k, name in zip(outs, kinds, names):
            if isinstance(o, torch.Tensor) and o.numel() * o.element_size() > _MAX_OUTPUT_BYTES:
                raise ConversionError(f"output {name!r} has shape {tuple(o.shape)}: "
                                      f"{o.numel() * o.element_size()} bytes do not fit in memory")
            try:
                result.append(_to_py(o, k))
            except (MemoryError, ValueError, RuntimeError) as exc:
                raise ConversionError(f"output {name!r} cannot be read as numpy: {exc}") from exc
        return result


def _to_py(o: Any, onnx_dtype: Any = None) -> Any:
    if isinstance(o, torch.Tensor):
        return dtypes.to_numpy(o, onnx_dtype)  # 4-bit types held widened come back as such
    if isinstance(o, (list, tuple)):
        return [_to_py(x) for x in o]
    return o


__all__ = ["NodeFn", "OnnxModule", "ShapeProgram", "TorchBackend", "import_plan"]
