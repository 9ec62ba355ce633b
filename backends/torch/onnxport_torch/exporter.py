"""PyTorch -> ONNX: ``torch.export`` to core ATen, then one export primitive per ATen op.

The flow: ``torch.export.export`` (the training IR: ``aten.conv2d``, ``aten.batch_norm``,
``aten.lstm`` ... whole) -> when some op of it has no primitive, or it mutates a tensor in place,
``run_decompositions`` to core ATen with :data:`KEEP` left whole (they map to single ONNX ops;
:mod:`.export_decompose`) -> a check that every op has a primitive (one error lists them all,
with the module paths) -> walk the FX graph (:mod:`.export_walk`), calling the primitive
registered for each target with a :class:`TorchGraph` as ``g`` (:mod:`.export_graph`) -> the
core export pipeline (:func:`onnxport.exporting.pipeline.finish`: optimize, down-convert, check) -> an
``onnx_ir.Model``. A call of a module that has a module primitive (``nn.LocalResponseNorm``,
:mod:`.ops.export.modules`) is exported whole by it; with ``functions=True`` a repeated
submodule call becomes one model-local function (:mod:`.export_functions`).

Parameters and buffers become initializers named by their ``state_dict`` keys (one initializer
per storage; a module imported from ONNX gets its initializers' ONNX names back); node names
carry the module path and the metadata the module hierarchy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import torch

import onnxport
from onnxport.errors import ConversionError, InputError
from onnxport.exporting import pipeline as _export
from onnxport.exporting.pipeline import CLASS_HIERARCHY_KEY, DEFAULT_OPSET, MIN_OPSET, NAME_SCOPES_KEY
from onnxport.plugin.backend import Exporter
from onnxport.plugin.testkit_support import TestkitSupport

from . import dtypes
from .export_decompose import (
    KEEP,
    check_supported,
    decomposed_away,
    decomposition_table,
    needs_decomposition,
)
from .export_functions import FUNCTION_DOMAIN, FunctionPlan, module_primitive_calls
from .export_graph import TorchGraph, module_stack, target_name
from .export_walk import Converter

__all__ = [
    "CLASS_HIERARCHY_KEY",
    "DEFAULT_OPSET",
    "FUNCTION_DOMAIN",
    "KEEP",
    "MIN_OPSET",
    "NAME_SCOPES_KEY",
    "ExportSupport",
    "TorchGraph",
    "check_supported",
    "decomposed_away",
    "decomposition_table",
    "export_model",
    "module_primitive_calls",
    "module_stack",
    "needs_decomposition",
    "run_sample",
    "target_name",
]


# -- dynamic shapes -------------------------------------------------------------------------------
def named_dims(dynamic_shapes: Any) -> Any:
    """``dynamic_shapes`` with dim names given as strings (``{0: "batch"}``) turned into ``Dim`` objects
    (one ``Dim`` per name, so inputs naming the same dim share it)."""
    dims: dict[str, Any] = {}

    def conv(spec: Any) -> Any:
        if isinstance(spec, str):
            return dims.setdefault(spec, torch.export.Dim(spec))
        if isinstance(spec, dict):
            return {k: conv(v) for k, v in spec.items()}
        if isinstance(spec, (list, tuple)):
            return type(spec)(conv(v) for v in spec)
        return spec

    return None if dynamic_shapes is None else conv(dynamic_shapes)


def _dim_specs(module: torch.nn.Module, args: tuple[Any, ...], dynamic_shapes: Any) -> list[Any]:
    """The per-input dim spec (dict or sequence) of each positional tensor input, in order."""
    if dynamic_shapes is None:
        return [None] * len(args)
    params = inspect.signature(module.forward).parameters
    if isinstance(dynamic_shapes, dict):
        names = list(params)
        var = [p.name for p in params.values() if p.kind == p.VAR_POSITIONAL]
        if var and var[0] in dynamic_shapes:
            return list(dynamic_shapes[var[0]]) + [None] * len(args)
        return [dynamic_shapes.get(p) for p in names[: len(args)]]
    specs = list(dynamic_shapes)
    if [p.kind for p in params.values()] == [inspect.Parameter.VAR_POSITIONAL] and len(specs) == 1:
        specs = list(specs[0] or [None] * len(args))  # forward(*args): one spec per arg, nested
    return specs + [None] * (len(args) - len(specs))


def _dim_names(ep: torch.export.ExportedProgram, specs: list[Any]) -> dict[str, str]:
    """Symbol (``s77``) -> the ``Dim``'s name (``batch``) for the graph inputs' dynamic dims."""
    names: dict[str, str] = {}
    kinds = torch.export.graph_signature.InputKind
    users = [s.arg.name for s in ep.graph_signature.input_specs if s.kind == kinds.USER_INPUT]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for arg_name, spec in zip(users, specs):
        val = nodes[arg_name].meta.get("val")
        if spec is None or not isinstance(val, torch.Tensor):
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for axis, dim in items:
            label = getattr(dim, "__name__", None)
            size = val.shape[axis]
            if label and isinstance(size, torch.SymInt):
                names.setdefault(str(size.node.expr), label)
    return names


# -- entry point ---------------------------------------------------------------------------------
def export_model(
    module: torch.nn.Module | Callable[..., Any],
    example_inputs: Any = (),
    *,
    opset: int | None = None,
    dynamic_shapes: Any = None,
    kwargs: dict[str, Any] | None = None,
    strict: bool = False,
    functions: bool = False,
    optimize: bool = True,
    fold_batchnorm: bool = False,
    decompose: bool | None = None,
) -> ir.Model:
    """Export a ``torch.nn.Module`` to an ONNX IR model.

    :param module: the module; exported in its current mode (call ``.eval()`` first for inference).
        A plain function of tensors is traced as the ``forward`` of a wrapper module.
    :param example_inputs: a tensor or a tuple of positional inputs.
    :param opset: the default-domain opset, :data:`MIN_OPSET` to the newest onnx knows
        (default :data:`DEFAULT_OPSET`).
    :param dynamic_shapes: ``torch.export`` dynamic shapes (``Dim`` objects, or the form every
        backend takes: one dict per input from axis to a name, ``({0: "batch"},)``); dynamic dims become
        symbolic dims named after the ``Dim``.
    :param kwargs: keyword inputs for ``forward`` (exported as graph inputs too).
    :param strict: ``torch.export``'s strict (TorchDynamo) tracing.
    :param functions: emit a submodule called more than once (one block applied twice, a layer
        reused in a loop) as one model-local ONNX function (domain :data:`FUNCTION_DOMAIN`,
        named after the module's class and path) called by one node per call site; its weights
        are inputs of the function, so they stay one initializer each.
    :param optimize: fold constants and static shapes and drop no-ops
        (:func:`onnxport.exporting.passes.optimize.optimize`); weights keep their names and values.
    :param fold_batchnorm: fold each inference BatchNormalization that follows a Conv (the Conv's
        only reader) into the Conv's weight and bias (:func:`onnxport.exporting.passes.optimize.fold_batchnorm`).
        Off by default: the BatchNormalization's parameters disappear from the graph and the
        Conv weights change value, so the exported weights no longer match the state_dict.
        Only main-graph Convs fold: inside a ``functions=True`` function the weights are inputs.
    :param decompose: ``None`` (default): export ``torch.export``'s training IR as it is when
        every op of it has a primitive and nothing is written in place, else decompose to core
        ATen first (:func:`needs_decomposition`); ``True``: always decompose; ``False``: never
        (an op without a primitive is then an :class:`UnsupportedOpError`).
    """
    from onnxport.plugin.discovery import registry

    options = _export.ExportOptions(opset=opset, optimize=optimize, fold_batchnorm=fold_batchnorm,
                                    functions=functions)
    opset = _export.choose_opset(opset)
    dynamic_shapes = named_dims(dynamic_shapes)
    if not isinstance(module, torch.nn.Module):
        if not callable(module):
            raise InputError(f"export_model exports a torch.nn.Module or a function, not {type(module).__name__}")
        if dynamic_shapes is not None:  # _FunctionModule.forward(*args) takes them nested
            dynamic_shapes = (tuple(dynamic_shapes),)
        module = _FunctionModule(module)
    args = example_inputs if isinstance(example_inputs, tuple) else (
        tuple(example_inputs) if isinstance(example_inputs, list) else (example_inputs,)
    )
    try:
        ep = torch.export.export(
            module, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes, strict=strict
        )
    except Exception as exc:
        raise ConversionError(
            f"torch.export could not trace {type(module).__qualname__}: {type(exc).__name__}: {exc}"
        ) from exc
    reg = registry()
    calls = module_primitive_calls(ep.graph, module)
    if decompose is None:
        decompose = needs_decomposition(ep, reg, calls) is not None
    if decompose:
        try:
            ep = ep.run_decompositions(decomposition_table())
        except Exception as exc:
            raise ConversionError(
                f"torch.export could not decompose {type(module).__qualname__}: {type(exc).__name__}: {exc}"
            ) from exc
        calls = module_primitive_calls(ep.graph, module)
    check_supported(ep, reg, calls)
    keys = getattr(module, "initializer_keys", None)  # an imported OnnxModule: its ONNX names
    onnx_names = {key: name for name, key in keys.items()} if isinstance(keys, dict) else None
    conv = Converter(ep, reg, _dim_names(ep, _dim_specs(module, args, dynamic_shapes)), onnx_names)
    conv.module_calls = calls
    if functions:
        conv.plan = FunctionPlan(ep.graph, calls)
    g = TorchGraph(opset, name=type(module).__name__, converter=conv)
    conv.run_main(g)
    # an imported OnnxModule exported again gets its graph input and output names back
    options.input_names = _names(module, "onnx_input_names")
    options.output_names = _names(module, "onnx_output_names")
    return _export.finish(g.model(producer="onnxport-torch"), options, backend="torch",
                          foldable=conv.constant_names, targets=conv.used_targets, registry=reg)


def _names(module: Any, attr: str) -> list[str] | None:
    names = getattr(module, attr, None)
    return names if isinstance(names, list) else None


def run_sample(fn: Callable | torch.nn.Module, args: tuple[Any, ...], **options: Any) -> ir.Model:
    """Export a sample's callable (a module, switched to eval mode, or a plain function)."""
    if isinstance(fn, torch.nn.Module):
        fn.eval()
    return export_model(fn, args, **options)


class _FunctionModule(torch.nn.Module):
    """Wraps a plain function so torch.export can trace it."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


# -- testkit support (the backend object's export hooks, see onnxport_testkit.runner) -------------
class ExportSupport(Exporter, TestkitSupport):
    """The torch backend's export part (:class:`onnxport.plugin.backend.Exporter`)."""

    name = "torch"

    def export_model(self, module: Any, example_inputs: Any = (), **options: Any) -> ir.Model:
        """:func:`export_model`; the testkit's ``example_kwargs`` are ``forward``'s keyword inputs."""
        kwargs = options.pop("example_kwargs", None)
        if kwargs:
            options["kwargs"] = kwargs
        return export_model(module, example_inputs, **options)

    @staticmethod
    def prepare_export_sample(sample: Any, target: str | None = None) -> tuple[Any, dict[str, Any]]:
        """Modules in eval mode; dim 0 of every input with more than one row left to torch
        (``Dim.AUTO``: symbolic where the traced code allows), which is what exercises the
        symbolic-size primitives (``aten.sym_size.int``, ``operator.mul`` ...).

        The sample of a core ATen primitive (``target``) is decomposed, so that its op is the
        one traced; the sample of a training-IR op (``aten.conv2d``) is not."""
        if isinstance(sample.fn, torch.nn.Module):
            sample.fn.eval()
        dyn = tuple(
            {0: torch.export.Dim.AUTO} if isinstance(a, torch.Tensor) and a.dim() and a.shape[0] > 1 else None
            for a in sample.args
        )
        options: dict[str, Any] = {"dynamic_shapes": dyn} if any(d is not None for d in dyn) else {}
        if target is not None:
            options["decompose"] = False if decomposed_away(target) else True
        return sample, options

    def check_exported_sample(self, prim: Any, sample: Any, model: ir.Model) -> None:
        """The sample traced one of the ATen ops its primitive function is registered for."""
        targets = {p.target for p in onnxport.registry().exports(self.name) if p.fn is prim.fn}
        traced = model.meta.get(_export.targets_key(self.name), [])
        assert targets & set(traced), f"the sample exercises none of {sorted(targets)}; traced: {traced}"

    @staticmethod
    def run_native(fn: Callable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[np.ndarray]:
        """The tensor leaves of ``fn``'s output (pytree order, as torch.export orders outputs)."""
        with torch.no_grad():
            out = fn(*args, **kwargs)
        leaves, _ = torch.utils._pytree.tree_flatten(out)
        return [dtypes.to_numpy(t.detach()) for t in leaves if isinstance(t, torch.Tensor)]

    @staticmethod
    def check_roundtrip(sample: Any, imported: torch.nn.Module) -> None:
        """A module's parameters come back with their values: under their own names, or (a layer
        that is the root module itself, which the import nests in a native submodule) as the
        ONNX initializers the import records them by."""
        if not isinstance(sample.fn, torch.nn.Module):
            return
        ours = dict(sample.fn.named_parameters())
        back = dict(imported.named_parameters())
        keys = imported.initializer_keys  # ONNX initializer name -> state_dict key
        for k, p in ours.items():
            got = back.get(k)
            if got is None and "." not in k and k in keys:
                got = imported.get_parameter(keys[k])
            assert got is not None, f"parameter {k!r} is missing after the round trip; it has {sorted(back)}"
            assert torch.equal(got.detach(), p.detach()), f"parameter {k!r} changed in the round trip"
        assert len(back) == len(ours), f"parameters {sorted(back)} after the round trip, {sorted(ours)} before"
