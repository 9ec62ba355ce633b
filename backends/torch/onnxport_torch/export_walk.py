"""The walk over an exported program: one export primitive per FX node, into a :class:`TorchGraph`."""

from __future__ import annotations

import re
from typing import Any

import onnx_ir as ir
import torch
import torch.fx
from onnx_ir.tensor_adapters import TorchTensor

import onnxport
from onnxport.errors import ConversionError, InputError
from onnxport.exporting import pipeline as _export

from . import dtypes
from .export_functions import FUNCTION_DOMAIN, FunctionGraph, FunctionPlan, PrimitiveCall
from .export_graph import TorchGraph, module_stack, resolve, storage_key, target_name


class Converter:
    """Walks an exported program and calls the export primitives."""

    def __init__(self, ep: torch.export.ExportedProgram, registry: Any, dim_names: dict[str, str],
                 onnx_names: dict[str, str] | None = None):
        self.ep = ep
        #: state_dict key -> initializer name (a module imported from ONNX keeps its ONNX names)
        self.onnx_names = onnx_names or {}
        self.registry = registry
        self.dim_names = dim_names
        self.used_targets: set[str] = set()
        #: initializers holding lifted literals (not parameters or buffers): foldable
        self.constant_names: set[str] = set()
        #: the repeated submodule calls emitted as model-local functions (``functions=True``)
        self.plan = FunctionPlan()
        #: main-graph node -> the call of a module with a module primitive it belongs to
        self.module_calls: dict[torch.fx.Node, PrimitiveCall] = {}

    # -- shapes ----------------------------------------------------------------------------------
    def dim(self, d: Any) -> int | str:
        if isinstance(d, int):
            return d
        expr = str(d.node.expr) if isinstance(d, torch.SymInt) else str(d)
        try:
            return int(expr)
        except ValueError:
            pass
        return re.sub(r"\b[su]\d+\b", lambda m: self.dim_names.get(m.group(0), m.group(0)), expr)

    def annotate(self, value: ir.Value, val: Any) -> None:
        if isinstance(val, torch.Tensor):
            value.dtype = dtypes.to_onnx_dtype(val.dtype)
            value.shape = ir.Shape([self.dim(d) for d in val.shape])
        elif isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
            value.dtype = ir.DataType.INT64
            value.shape = ir.Shape([])
        elif isinstance(val, (torch.SymFloat, float)):
            value.dtype = ir.DataType.FLOAT
            value.shape = ir.Shape([])
        elif isinstance(val, (torch.SymBool, bool)):
            value.dtype = ir.DataType.BOOL
            value.shape = ir.Shape([])

    # -- the walk -----------------------------------------------------------------------------------
    def run_main(self, g: TorchGraph) -> None:
        sig = self.ep.graph_signature
        specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
        env: dict[torch.fx.Node, Any] = {}
        kinds = torch.export.graph_signature.InputKind
        for node in self.ep.graph.nodes:
            if node.op != "placeholder":
                continue
            spec = specs.get(node.name)
            val = node.meta.get("val")
            if spec is None or spec.kind == kinds.USER_INPUT:
                if not isinstance(val, torch.Tensor):
                    if node.users:
                        raise InputError(
                            f"input {node.name!r} is a {type(val).__name__}; only tensor inputs are exported"
                        )
                    continue
                env[node] = g.input(
                    node.name, dtypes.to_onnx_dtype(val.dtype), [self.dim(d) for d in val.shape]
                )
                continue
            if spec.kind in (kinds.PARAMETER, kinds.BUFFER):
                tensor = (
                    self.ep.state_dict[spec.target]
                    if spec.target in self.ep.state_dict
                    else self.ep.constants[spec.target]
                )
            elif spec.kind == kinds.CONSTANT_TENSOR:
                tensor = self.ep.constants[spec.target]
                self.constant_names.add(spec.target)
            else:
                raise ConversionError(f"input {node.name!r} of kind {spec.kind.name} cannot be exported")
            env[node] = self.initializer(g, self.onnx_names.get(spec.target, spec.target), tensor)
        outputs = self.walk(g, self.ep.graph, env)
        out_specs = sig.output_specs
        kinds_out = torch.export.graph_signature.OutputKind
        for spec, value in zip(out_specs, outputs):
            if spec.kind != kinds_out.USER_OUTPUT:
                continue  # buffer mutations (training-mode batch norm) are not part of the graph
            if not isinstance(value, ir.Value):
                raise ConversionError(
                    f"output {getattr(spec.arg, 'name', '?')!r} is {value!r}, not a tensor; "
                    "only tensor outputs are exported"
                )
            g.output(value, getattr(spec.arg, "name", None))

    def initializer(self, g: TorchGraph, name: str, tensor: torch.Tensor) -> ir.Value:
        t = tensor.detach()
        return g.initializer(name, TorchTensor(t.contiguous(), name=name), key=storage_key(t))

    def run_graph(self, g: TorchGraph, gm: torch.fx.GraphModule, operands: list[Any]) -> None:
        env: dict[torch.fx.Node, Any] = {}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(operands):
            raise ConversionError(
                f"subgraph {g.name!r} takes {len(placeholders)} inputs, got {len(operands)}"
            )
        env.update(zip(placeholders, operands))
        for value in self.walk(g, gm.graph, env, gm):
            if not isinstance(value, ir.Value):
                raise ConversionError(f"subgraph {g.name!r} returns {value!r}, not a tensor")
            g.output(value)

    def walk(self, g: TorchGraph, graph: torch.fx.Graph, env: dict, root: Any = None) -> list[Any]:
        root = root if root is not None else self.ep.graph_module
        plan = self.plan if graph is self.ep.graph else None
        for node in graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "get_attr":
                obj = getattr(root, node.target)
                env[node] = (
                    self.initializer(g, node.target, obj) if isinstance(obj, torch.Tensor) else obj
                )
                continue
            if node.op == "output":
                outs = node.args[0]
                return [resolve(o, env) for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
            call = plan.calls.get(node) if plan is not None else None
            if call is not None:
                if node is call.nodes[-1]:
                    self.emit_call(g, call, env)
                continue
            self.convert(g, node, env)
        return []

    def convert(self, g: TorchGraph, node: torch.fx.Node, env: dict) -> None:
        """Convert one node; the nodes of a module-primitive call become one emission at its last."""
        call = self.module_calls.get(node)
        if call is None:
            self.convert_node(g, node, env)
        elif node is call.nodes[-1]:
            self.emit_module_call(g, call, env)

    def emit_module_call(self, g: TorchGraph, call: PrimitiveCall, env: dict) -> None:
        """A call of a module with a module primitive (:mod:`.ops.export.modules`): the primitive's
        ONNX for the whole call, named after the call's result node."""
        last = call.nodes[-1]
        g.fx = last
        meta = _export.metadata_of(module_stack(last)[: call.depth + 1])
        cls = type(call.module).__qualname__
        with g.scope(call.path or cls, meta) as sc:
            try:
                result = call.prim.fn(g, call.module, *[env[n] for n in call.inputs])
            except Exception as exc:
                raise ConversionError(
                    f"exporting module {call.path or '<root module>'!r} ({cls}) as a whole: {type(exc).__name__}: {exc}"
                ) from exc
        self._name_results(g, last, result, {id(o) for n in sc.nodes for o in n.outputs})
        env[last] = result

    def convert_node(self, g: TorchGraph, node: torch.fx.Node, env: dict) -> None:
        """Convert one FX ``call_function`` node (or a tuple ``getitem``) into ``g``."""
        name = target_name(node.target)
        if name == "operator.getitem":
            env[node] = resolve(node.args[0], env)[node.args[1]]
            return
        prim = self.registry.find_export("torch", name)
        self.used_targets.add(name)
        g.fx = node
        stack = module_stack(node)
        path = stack[-1][0] if stack else ""
        meta = _export.metadata_of([*stack, (node.name, name)])
        with g.scope(f"{path}/{node.name}" if path else node.name, meta) as sc:
            try:
                result = prim.fn(g, *resolve(node.args, env), **resolve(node.kwargs, env))
            except onnxport.OnnxportError as exc:
                if isinstance(exc, ConversionError) and "exporting " in str(exc):
                    raise
                raise g.error(str(exc)) from exc
            except Exception as exc:
                raise g.error(f"{type(exc).__name__}: {exc}") from exc
        produced = {id(o) for n in sc.nodes for o in n.outputs}
        self._name_results(g, node, result, produced)
        env[node] = result

    def emit_call(self, g: TorchGraph, call: _export.ModuleCall, env: dict) -> None:
        """One node calling the function of ``call``'s group (built at its first call site).

        Inputs that are not ONNX values (Python numbers the primitives baked into the body) must
        be the same at every call site; a call site where they differ is converted inline.
        """
        group = call.group
        values = [env[n] for n in call.inputs]
        if group.function is None:
            self._build_function(g, call, values)
        baked = group.baked_inputs
        if any(not _export.same_constant(values[i], v) for i, v in baked.items()):
            for node in call.nodes:
                self.convert(g, node, env)
            return
        for i, v in group.baked_outputs.items():
            env[call.outputs[i]] = v
        live = [i for i in range(len(call.outputs)) if i not in group.baked_outputs]
        if not live:
            return
        fn = group.function
        meta = _export.metadata_of(module_stack(call.nodes[0])[: call.depth + 1])
        ins = [v for i, v in enumerate(values) if i not in baked]
        with g.scope(call.path or type(self.ep.module()).__name__, meta):
            out = g.op(fn.name, *ins, domain=fn.domain, outputs=len(live))
        outs = [out] if len(live) == 1 else list(out)
        for i, value in zip(live, outs):
            node = call.outputs[i]
            g.rename(value, node.name)
            self.annotate(value, node.meta.get("val"))
            env[node] = value

    def _build_function(self, g: TorchGraph, call: _export.ModuleCall, values: list[Any]) -> None:
        group = call.group
        body = FunctionGraph(g.opset, name=group.name, parent=g)
        benv: dict[torch.fx.Node, Any] = {}
        for i, (node, v) in enumerate(zip(call.inputs, values)):
            if isinstance(v, ir.Value):
                x = ir.Value(name=body.unique_name(f"{group.name}_{node.name}"), type=v.type, shape=v.shape)
                body.inputs.append(x)
                benv[node] = x
            else:
                group.baked_inputs[i] = v
                benv[node] = v
        for node in call.nodes:
            self.convert(body, node, benv)
        for i, node in enumerate(call.outputs):
            v = benv[node]
            if isinstance(v, ir.Value):
                body.output(v)
            elif isinstance(v, (tuple, list)) and any(isinstance(x, ir.Value) for x in v):
                raise ConversionError(
                    f"module {call.path!r}: the result of {node.name} is a tuple read outside the module; "
                    "it cannot be a function output"
                )
            else:
                group.baked_outputs[i] = v
        group.function = _export.add_function(g, body, group.name, FUNCTION_DOMAIN)

    def _name_results(self, g: TorchGraph, node: torch.fx.Node, result: Any, produced: set[int]) -> None:
        val = node.meta.get("val")
        if isinstance(result, ir.Value):
            if id(result) in produced:
                g.rename(result, node.name)
                self.annotate(result, val)
            return
        if isinstance(result, (tuple, list)) and isinstance(val, (tuple, list)):
            for i, (r, v) in enumerate(zip(result, val)):
                if isinstance(r, ir.Value) and id(r) in produced:
                    g.rename(r, f"{node.name}_{i}")
                    self.annotate(r, v)
