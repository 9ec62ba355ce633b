"""ONNX -> torch: :func:`import_plan` builds an :class:`OnnxModule`; :class:`TorchBackend` is the
backend object the plugin registers (import, export, native files, testkit conversions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir
import torch
from torch import nn

from onnxport.errors import ConversionError, InputError, OnnxportError
from onnxport.importing.inputs import input_spec
from onnxport.importing.plan import ImportPlan, iter_graphs
from onnxport.plugin.backend import Backend

from . import dtypes
from .exporter import ExportSupport
from .functions import call_function
from .hierarchy import restore
from .import_graph import GraphBuilder, ImportState
from .module import OnnxModule
from .options import EXPORT_OPTIONS, IMPORT_OPTIONS
from .runtime import NodeFn, ShapeProgram

_MAX_OUTPUT_BYTES = 1 << 40  # an output past this (an expanded view) cannot become a numpy array


def import_plan(plan: ImportPlan, **options: Any) -> OnnxModule:
    """Build the ``OnnxModule`` for a prepared plan.

    ``device=`` (a ``torch.device`` or its name) and ``dtype=`` (a float ``torch.dtype`` or its
    name, e.g. ``"float16"``) place the weights at import, as ``.to(device, dtype)`` would after.
    """
    device, dtype = placement(options)
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
    module._onnx_mode.import_dtype = module._onnx_mode.float_dtype = _import_dtype(graph, state)
    module.train(options.get("training", False))
    if device is not None or dtype is not None:
        module.to(device=device, dtype=dtype)
    return module


def placement(options: dict[str, Any]) -> tuple[torch.device | None, torch.dtype | None]:
    """The ``device=`` and ``dtype=`` import options, checked (an InputError names a bad one)."""
    device, dtype = options.get("device"), options.get("dtype")
    if device is not None:
        if not isinstance(device, (str, torch.device)):
            raise InputError(f"option device must be a torch.device or its name, got {type(device).__name__}")
        try:
            device = torch.device(device)
        except (RuntimeError, ValueError) as exc:
            raise InputError(f"option device={device!r} is not a torch device: {exc}") from None
    if dtype is not None:
        named = getattr(torch, dtype, None) if isinstance(dtype, str) else dtype
        if not isinstance(named, torch.dtype) or not named.is_floating_point:
            raise InputError(f"option dtype must be a floating torch.dtype (or its name), got {dtype!r}")
        dtype = named
    return device, dtype


def _import_dtype(graph: ir.Graph, state: ImportState) -> torch.dtype:
    """The float dtype the model computes in as imported: its first float input's, else its float
    weights' most common one, else float32."""
    for v in graph.inputs:
        try:
            t = dtypes.to_torch_dtype(v.dtype) if v.dtype is not None else None
        except ConversionError:
            t = None
        if t is not None and t.is_floating_point:
            return t
    counts: dict[torch.dtype, int] = {}
    for t in state.static.values():
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            counts[t.dtype] = counts.get(t.dtype, 0) + t.numel()
    return max(counts, key=counts.__getitem__) if counts else torch.float32


class TorchBackend(Backend, ExportSupport):
    """The PyTorch backend: ONNX -> ``torch.nn.Module``; ``torch.nn.Module`` -> ONNX (ExportSupport)."""

    name = "torch"
    import_options = IMPORT_OPTIONS
    export_options = EXPORT_OPTIONS

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
        """Call an imported module on numpy inputs exactly as a user does (``module(*inputs)``,
        which takes numpy arrays); outputs as numpy (testkit, CLI)."""
        out = module(*inputs)
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
