"""PyTorch -> ONNX: ``torch.export`` to core ATen, then one export primitive per ATen op.

The flow: ``torch.export.export`` (the training IR: ``aten.conv2d``, ``aten.batch_norm``,
``aten.lstm`` ... whole) -> when some op of it has no primitive, or it mutates a tensor in place,
``run_decompositions`` to core ATen with :data:`KEEP` left whole (they map to single ONNX ops)
-> a check that every op has a primitive (one error lists them all, with the module paths) ->
walk the FX graph, calling the primitive registered for each target with a
:class:`TorchGraph` as ``g`` -> opset down-adaptation -> an ``onnx_ir.Model``. A call of a
module that has a module primitive (``nn.LocalResponseNorm``, :mod:`.ops.export.modules`) is
exported whole by it: its traced ops need no primitives.

Parameters and buffers become initializers named by their ``state_dict`` keys (one initializer
per storage; a module imported from ONNX gets its initializers' ONNX names back); node names
carry the module path and the metadata the module hierarchy.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir
import torch
import torch.fx
from onnx_ir.tensor_adapters import TorchTensor

import onnxport
from onnxport.build import Builder, check_opset
from onnxport.errors import ConversionError, InputError, UnsupportedOpError

from . import dtypes

#: The opset written when none is asked for, and the oldest one exporters support.
DEFAULT_OPSET = 18
MIN_OPSET = 13

#: ATen ops kept whole (not decomposed) because one ONNX op expresses them.
KEEP: tuple[str, ...] = (
    "aten.linear.default",
    "aten.matmul.default",
    "aten.layer_norm.default",
    "aten.scaled_dot_product_attention.default",
    "aten.hardswish.default",
    "aten.hardsigmoid.default",
    "aten.upsample_nearest2d.vec",
    "aten.upsample_bilinear2d.vec",
)

#: Targets the driver handles itself (tuple element access).
_DRIVER_TARGETS = {"operator.getitem"}

#: metadata_props keys (the ones torch.onnx writes), JSON lists from the root module down.
NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY_KEY = "pkg.torch.onnx.class_hierarchy"


def target_name(target: Any) -> str:
    """The registry key of an FX call target: ``aten.convolution.default``, ``operator.mul``."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", repr(target))
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    if mod == "math":
        return f"math.{name}"
    if name.startswith("sym_"):
        return f"torch.{name}"
    return f"{mod}.{name}"


def _storage_key(t: torch.Tensor) -> tuple[Any, ...]:
    """Identity of a tensor's data: tied parameters share it."""
    return (
        t.untyped_storage().data_ptr(),
        t.storage_offset(),
        tuple(t.shape),
        tuple(t.stride()),
        t.dtype,
    )


def _module_path(path: str) -> str:
    """``L['self'].layer1`` (older torch) or ``layer1`` -> ``layer1``."""
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"getattr\(([^,]+), '([^']+)'\)", r"\1.\2", path)
    return path


def module_stack(node: torch.fx.Node) -> list[tuple[str, str]]:
    """``[(path, class name), ...]`` from the root module down to the one that ran ``node``."""
    stack = node.meta.get("nn_module_stack") or {}
    out = []
    for key, (path, cls) in stack.items():
        if key.startswith("_empty_nn_module_stack"):
            continue
        cls_name = cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}"
        out.append((_module_path(path), cls_name))
    return out


class TorchGraph(Builder):
    """The ``g`` a torch export primitive receives: the core builder plus torch helpers."""

    def __init__(self, opset: int, *, name: str = "main_graph", parent: TorchGraph | None = None,
                 converter: _Converter | None = None):
        super().__init__(opset, name=name, parent=parent)
        self.converter = converter if converter is not None else (parent.converter if parent else None)
        #: the FX node being converted
        self.fx: torch.fx.Node | None = None

    # -- what the traced node says -------------------------------------------------------------
    def meta(self, i: int | None = None) -> Any:
        """The traced (fake) result of the current node, or its ``i``-th element."""
        val = self.fx.meta.get("val") if self.fx is not None else None
        return val if i is None else val[i]

    def out_dtype(self, i: int | None = None) -> ir.DataType:
        """The ONNX element type of the current node's result (or its ``i``-th element)."""
        val = self.meta(i)
        if isinstance(val, torch.Tensor):
            return dtypes.to_onnx_dtype(val.dtype)
        if isinstance(val, (torch.SymBool, bool)):
            return ir.DataType.BOOL
        if isinstance(val, (torch.SymFloat, float)):
            return ir.DataType.FLOAT
        return ir.DataType.INT64

    def out_rank(self, i: int | None = None) -> int:
        return self.meta(i).dim()

    @property
    def path(self) -> str:
        """The module path of the current node (``layer1.0.conv1``), '' at the root."""
        stack = module_stack(self.fx) if self.fx is not None else []
        return stack[-1][0] if stack else ""

    def error(self, message: str) -> ConversionError:
        """An error naming the current op and module path."""
        target = target_name(self.fx.target) if self.fx is not None else "?"
        where = self.path or "<root module>"
        return ConversionError(f"exporting {target} (node {self.fx.name if self.fx else '?'}) in module {where!r}: {message}")

    # -- value helpers ------------------------------------------------------------------------------
    @staticmethod
    def onnx_dtype(dtype: torch.dtype) -> ir.DataType:
        return dtypes.to_onnx_dtype(dtype)

    def rank(self, v: ir.Value) -> int:
        if v.shape is None:
            raise self.error(f"the rank of value {v.name!r} is unknown")
        return len(v.shape)

    def axis(self, dim: int, rank: int) -> int:
        """A possibly negative dim as a non-negative axis (0-d tensors accept -1 and 0)."""
        return dim + max(rank, 1) if dim < 0 else dim

    def scalar(self, value: Any, dtype: ir.DataType) -> ir.Value:
        """A 0-d constant (Python numbers) or a value cast to ``dtype`` (symbolic numbers)."""
        if isinstance(value, ir.Value):
            return self.cast(value, dtype)
        if dtype == ir.DataType.BFLOAT16:
            return self.cast(self.const(np.asarray(value, dtype=np.float32)), dtype)
        return self.const(np.asarray(value), dtype)

    def tensor(self, x: Any, dtype: ir.DataType | None = None) -> ir.Value:
        """A tensor value from a value or a Python number, cast to ``dtype`` when given."""
        if isinstance(x, ir.Value):
            return self.cast(x, dtype) if dtype is not None else x
        return self.scalar(x, dtype if dtype is not None else self.out_dtype())

    def dim_size(self, x: ir.Value, axis: int) -> int | ir.Value:
        """The size of ``x`` along ``axis``: an int when static, else a 1-element int64 value."""
        if x.shape is not None and isinstance(x.shape[axis], int):
            return x.shape[axis]
        shape = self.op("Shape", x)
        return self.op("Gather", shape, self.const(np.asarray([axis], dtype=np.int64)), axis=0)

    def subgraph_from(self, gm: torch.fx.GraphModule, operands: Sequence[Any], name: str) -> ir.Graph:
        """Convert an FX subgraph (a ``torch.cond`` branch) whose inputs are outer values."""
        sub = TorchGraph(self.opset, name=self.unique_name(name), parent=self)
        saved = self.fx
        self.converter.run_graph(sub, gm, list(operands))
        self.fx = saved
        return sub.graph()


class _Converter:
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
        self.plan = _FunctionPlan()
        #: main-graph node -> the call of a module with a module primitive it belongs to
        self.module_calls: dict[torch.fx.Node, _PrimitiveCall] = {}

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
        return g.initializer(name, TorchTensor(t.contiguous(), name=name), key=_storage_key(t))

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

        def arg(a: Any) -> Any:
            return _resolve(a, env)

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
                return [arg(o) for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
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

    def emit_module_call(self, g: TorchGraph, call: _PrimitiveCall, env: dict) -> None:
        """A call of a module with a module primitive (:mod:`.ops.export.modules`): the primitive's
        ONNX for the whole call, named after the call's result node."""
        last = call.nodes[-1]
        g.fx = last
        stack = module_stack(last)[: call.depth + 1]
        meta = {
            NAME_SCOPES_KEY: json.dumps([p for p, _ in stack]),
            CLASS_HIERARCHY_KEY: json.dumps([c for _, c in stack]),
        }
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

        def arg(a: Any) -> Any:
            return _resolve(a, env)

        name = target_name(node.target)
        if name == "operator.getitem":
            env[node] = arg(node.args[0])[node.args[1]]
            return
        prim = self.registry.find_export("torch", name)
        self.used_targets.add(name)
        g.fx = node
        stack = module_stack(node)
        path = stack[-1][0] if stack else ""
        meta = {
            NAME_SCOPES_KEY: json.dumps([p for p, _ in stack] + [node.name]),
            CLASS_HIERARCHY_KEY: json.dumps([c for _, c in stack] + [name]),
        }
        with g.scope(f"{path}/{node.name}" if path else node.name, meta) as sc:
            try:
                result = prim.fn(g, *arg(node.args), **arg(node.kwargs))
            except onnxport.OnnxportError as exc:
                if isinstance(exc, ConversionError) and "exporting " in str(exc):
                    raise
                raise g.error(str(exc)) from exc
            except Exception as exc:
                raise g.error(f"{type(exc).__name__}: {exc}") from exc
        produced = {id(o) for n in sc.nodes for o in n.outputs}
        self._name_results(g, node, result, produced)
        env[node] = result

    def emit_call(self, g: TorchGraph, call: _ModuleCall, env: dict) -> None:
        """One node calling the function of ``call``'s group (built at its first call site).

        Inputs that are not ONNX values (Python numbers the primitives baked into the body) must
        be the same at every call site; a call site where they differ is converted inline.
        """
        group = call.group
        values = [env[n] for n in call.inputs]
        if group.function is None:
            self._build_function(g, call, values)
        baked = group.baked_inputs
        if any(not _same_constant(values[i], v) for i, v in baked.items()):
            for node in call.nodes:
                self.convert(g, node, env)
            return
        for i, v in group.baked_outputs.items():
            env[call.outputs[i]] = v
        live = [i for i in range(len(call.outputs)) if i not in group.baked_outputs]
        if not live:
            return
        fn = group.function
        stack = [(p, c) for p, c in module_stack(call.nodes[0])[: call.depth + 1]]
        meta = {
            NAME_SCOPES_KEY: json.dumps([p for p, _ in stack]),
            CLASS_HIERARCHY_KEY: json.dumps([c for _, c in stack]),
        }
        ins = [v for i, v in enumerate(values) if i not in baked]
        with g.scope(call.path or type(self.ep.module()).__name__, meta):
            out = g.op(fn.name, *ins, domain=fn.domain, outputs=len(live))
        outs = [out] if len(live) == 1 else list(out)
        for i, value in zip(live, outs):
            node = call.outputs[i]
            g.rename(value, node.name)
            self.annotate(value, node.meta.get("val"))
            env[node] = value

    def _build_function(self, g: TorchGraph, call: _ModuleCall, values: list[Any]) -> None:
        group = call.group
        body = _FunctionGraph(g.opset, name=group.name, parent=g)
        body._names, body._node_names = set(), set()  # a function body is its own name scope
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
        graph = ir.Graph(body.inputs, body.outputs, nodes=body.nodes,
                         opset_imports={"": g.opset}, name=group.name)
        fn = ir.Function(FUNCTION_DOMAIN, group.name, graph=graph, attributes=[])
        g.functions[(FUNCTION_DOMAIN, group.name, "")] = fn
        g.opset_imports.setdefault(FUNCTION_DOMAIN, 1)
        group.function = fn

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


# -- model-local functions ------------------------------------------------------------------------
#: the domain of the model-local functions ``functions=True`` writes
FUNCTION_DOMAIN = "pkg.onnxport.torch"


class _FunctionGraph(TorchGraph):
    """The builder of a function body: tensors a primitive would store as initializers become
    Constant nodes (a function cannot read the main graph's initializers)."""

    def initializer(self, name: str, tensor: Any, *, key: Any = None) -> ir.Value:
        if not isinstance(tensor, ir.TensorProtocol):
            tensor = ir.tensor(np.asarray(tensor), name=name)
        out = self.op("Constant", value=tensor)
        out.const_value, out.dtype, out.shape = tensor, tensor.dtype, ir.Shape(list(tensor.shape))
        return out


def _resolve(a: Any, env: dict) -> Any:
    """An FX argument with its nodes replaced by their converted values (lists, tuples, dicts too)."""
    if isinstance(a, torch.fx.Node):
        return env[a]
    if isinstance(a, (list, tuple)):
        return type(a)(_resolve(x, env) for x in a)
    if isinstance(a, dict):
        return {k: _resolve(v, env) for k, v in a.items()}
    return a


def _same_constant(a: Any, b: Any) -> bool:
    if isinstance(a, ir.Value) or isinstance(b, ir.Value):
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare are not the same constant
        return a is b


class _CallGroup:
    """Calls of one submodule with the same traced body: one function."""

    def __init__(self, name: str):
        self.name = name
        self.calls: list[_ModuleCall] = []
        self.function: ir.Function | None = None
        #: input / output positions holding Python constants instead of ONNX values
        self.baked_inputs: dict[int, Any] = {}
        self.baked_outputs: dict[int, Any] = {}


class _ModuleCall:
    """One call of a submodule: its FX nodes, the values it reads and the ones read after it."""

    def __init__(self, key: str, path: str, cls: str, depth: int):
        self.key, self.path, self.cls, self.depth = key, path, cls, depth
        self.nodes: list[torch.fx.Node] = []
        self.inputs: list[torch.fx.Node] = []
        self.outputs: list[torch.fx.Node] = []
        self.group: _CallGroup | None = None

    def finish(self) -> None:
        members = set(self.nodes)
        for node in self.nodes:
            for a in node.all_input_nodes:
                if a not in members and a not in self.inputs:
                    self.inputs.append(a)
            if any(u not in members for u in node.users):
                self.outputs.append(node)

    def signature(self) -> tuple[Any, ...]:
        """What must match for two calls to share one function body."""
        index = {n: i for i, n in enumerate(self.nodes)}
        ext = {n: i for i, n in enumerate(self.inputs)}

        def norm(a: Any) -> Any:
            if isinstance(a, torch.fx.Node):
                return ("n", index[a]) if a in index else ("in", ext[a])
            if isinstance(a, (list, tuple)):
                return (type(a).__name__, tuple(norm(x) for x in a))
            if isinstance(a, dict):
                return ("dict", tuple((k, norm(v)) for k, v in a.items()))
            return ("c", repr(a))

        def val(n: torch.fx.Node) -> str:
            v = n.meta.get("val")
            items = v if isinstance(v, (list, tuple)) else [v]
            return repr([(tuple(str(d) for d in x.shape), x.dtype) if isinstance(x, torch.Tensor) else str(x) for x in items])

        body = tuple((target_name(n.target), norm(n.args), norm(n.kwargs), val(n)) for n in self.nodes)
        return (self.path, body, tuple(val(n) for n in self.inputs), tuple(index[n] for n in self.outputs))


#: symbolic scalars (sizes and their arithmetic): ``torch.export`` computes one on outer values
#: once, in the first call that needs it, so such nodes stay outside the calls
_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


class _FunctionPlan:
    """Which main-graph nodes belong to repeated submodule calls (``functions=True``).

    ``torch.export`` records each call of a submodule under its own ``nn_module_stack`` key
    (``L__self__block``, ``L__self__block@1`` ...) with the module's path: a path with several
    keys is a module called more than once. Nodes go to the call of their outermost such module;
    calls of one module whose traced bodies match (:meth:`_ModuleCall.signature`) share a function.
    A call holding part of a module-primitive call (``whole``), not all of it, is converted inline.
    """

    def __init__(self, graph: torch.fx.Graph | None = None, whole: dict[torch.fx.Node, Any] | None = None):
        self.calls: dict[torch.fx.Node, _ModuleCall] = {}
        self.groups: list[_CallGroup] = []
        if graph is not None:
            self._plan(graph, whole or {})

    def _plan(self, graph: torch.fx.Graph, whole: dict[torch.fx.Node, Any]) -> None:
        nodes = [n for n in graph.nodes if n.op == "call_function"]
        keys_of: dict[str, set[str]] = {}
        for node in nodes:
            for key, (path, _) in (node.meta.get("nn_module_stack") or {}).items():
                path = _module_path(path)
                if path and not key.startswith("_empty_nn_module_stack"):
                    keys_of.setdefault(path, set()).add(key)
        repeated = {p for p, ks in keys_of.items() if len(ks) > 1}
        calls: dict[str, _ModuleCall] = {}
        for node in nodes:
            call = None
            target = target_name(node.target)
            if target == "operator.getitem" and node.args[0] in self.calls:
                call = self.calls[node.args[0]]
            elif isinstance(node.meta.get("val"), _SYMBOLIC) and not (set(node.all_input_nodes) & set(self.calls)):
                pass  # size arithmetic on outer values: torch.export computes it once for all calls
            else:
                for depth, (key, (path, cls)) in enumerate((node.meta.get("nn_module_stack") or {}).items()):
                    path = _module_path(path)
                    if path in repeated:
                        if key not in calls:
                            cls_name = cls if isinstance(cls, str) else cls.__qualname__
                            calls[key] = _ModuleCall(key, path, cls_name, depth)
                        call = calls[key]
                        break
            if call is not None:
                call.nodes.append(node)
                self.calls[node] = call
        for call in list(calls.values()):
            members = set(call.nodes)
            if any(not set(whole[n].nodes) <= members for n in call.nodes if n in whole):
                for n in call.nodes:
                    self.calls.pop(n, None)
                continue
            call.finish()
        self._check_order(graph, list(calls.values()))
        by_sig: dict[Any, list[_ModuleCall]] = {}
        for call in calls.values():
            if self.calls.get(call.nodes[0]) is call:
                by_sig.setdefault(call.signature(), []).append(call)
        names: set[str] = set()
        for group_calls in by_sig.values():
            if len(group_calls) < 2:
                for call in group_calls:
                    for n in call.nodes:
                        self.calls.pop(n, None)
                continue
            first = group_calls[0]
            base = re.sub(r"\W", "_", f"{first.cls.rsplit('.', 1)[-1]}_{first.path}")
            name, i = base, 0
            while name in names:
                i += 1
                name = f"{base}_{i}"
            names.add(name)
            group = _CallGroup(name)
            for call in group_calls:
                call.group = group
                group.calls.append(call)
            self.groups.append(group)

    def _check_order(self, graph: torch.fx.Graph, calls: list[_ModuleCall]) -> None:
        """Calls are emitted at their last node; drop (convert inline) any call that would then
        come after a node that reads its results."""
        order = {n: i for i, n in enumerate(graph.nodes)}
        changed = True
        while changed:
            changed = False

            def at(n: torch.fx.Node) -> int:
                c = self.calls.get(n)
                return order[c.nodes[-1]] if c is not None else order[n]

            for node in graph.nodes:
                for a in node.all_input_nodes:
                    mine, theirs = self.calls.get(node), self.calls.get(a)
                    if mine is not None and mine is theirs:
                        continue
                    if at(a) >= at(node):
                        victim = theirs if theirs is not None else mine
                        for n in victim.nodes:
                            self.calls.pop(n, None)
                        changed = True
                        break
                if changed:
                    break


# -- module primitives ---------------------------------------------------------------------------
class _PrimitiveCall:
    """One call of a module that a module primitive exports whole: its FX nodes (the last one is
    the call's only result read outside), the outer nodes whose tensors it reads, the module."""

    def __init__(self, prim: Any, module: torch.nn.Module, path: str, depth: int, nodes: list[torch.fx.Node],
                 inputs: list[torch.fx.Node]):
        self.prim, self.module, self.path, self.depth = prim, module, path, depth
        self.nodes, self.inputs = nodes, inputs


def module_primitive_calls(graph: torch.fx.Graph, root: Any) -> dict[torch.fx.Node, _PrimitiveCall]:
    """Node -> the call it belongs to, for every call in ``graph`` (a main graph traced from
    ``root``) of a module that a module primitive exports (:mod:`.ops.export.modules`).

    A call is the main-graph nodes under one ``nn_module_stack`` key of the module (the outermost
    such module when they nest), less size arithmetic on outer values (``torch.export`` computes
    it once, in the first module that needs it); it is kept when its only result read outside is
    its last node and the primitive accepts it (its ``when``).
    """
    from .ops.export.modules import MODULE_EXPORTS, find_module_export

    if not MODULE_EXPORTS or not isinstance(root, torch.nn.Module):
        return {}
    names = {f"{c.__module__}.{c.__qualname__}" for c in MODULE_EXPORTS}
    groups: dict[str, tuple[str, int, list[torch.fx.Node]]] = {}
    member: dict[torch.fx.Node, str] = {}
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        key = None
        if target_name(node.target) == "operator.getitem" and node.args[0] in member:
            key = member[node.args[0]]
        elif not (isinstance(node.meta.get("val"), _SYMBOLIC) and not any(a in member for a in node.all_input_nodes)):
            for depth, (k, (path, cls)) in enumerate((node.meta.get("nn_module_stack") or {}).items()):
                cls_name = cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}"
                if cls_name in names and not k.startswith("_empty_nn_module_stack"):
                    key = k
                    groups.setdefault(k, (_module_path(path), depth, []))
                    break
        if key is not None:
            groups[key][2].append(node)
            member[node] = key
    calls: dict[torch.fx.Node, _PrimitiveCall] = {}
    for path, depth, nodes in groups.values():
        inside = set(nodes)
        inputs: list[torch.fx.Node] = []
        for node in nodes:
            inputs.extend(a for a in node.all_input_nodes if a not in inside and a not in inputs)
        read_outside = [n for n in nodes if any(u not in inside for u in n.users)]
        if read_outside != [nodes[-1]] or not isinstance(nodes[-1].meta.get("val"), torch.Tensor):
            continue
        try:
            module = root.get_submodule(path)
        except AttributeError:
            continue
        tensors = [a for a in inputs if isinstance(a.meta.get("val"), torch.Tensor)]
        prim = find_module_export(module, [a.meta["val"] for a in tensors])
        if prim is None:
            continue
        call = _PrimitiveCall(prim, module, path, depth, nodes, tensors)
        calls.update((n, call) for n in nodes)
    return calls


# -- checks --------------------------------------------------------------------------------------
def _iter_fx(gm: torch.fx.GraphModule) -> list[tuple[torch.fx.Node, torch.fx.GraphModule]]:
    out = []
    for node in gm.graph.nodes:
        out.append((node, gm))
        if node.op == "get_attr":
            sub = getattr(gm, node.target, None)
            if isinstance(sub, torch.fx.GraphModule):
                out.extend(_iter_fx(sub))
    return out


def check_supported(ep: torch.export.ExportedProgram, registry: Any, skip: Collection[torch.fx.Node] = ()) -> None:
    """Raise one :class:`UnsupportedOpError` listing every op without a primitive, with paths
    (``skip``: nodes exported otherwise, the module-primitive calls)."""
    from .export_unsupported import UNSUPPORTED

    missing: dict[str, list[str]] = {}
    for node, _ in _iter_fx(ep.graph_module):
        if node.op != "call_function" or node in skip:
            continue
        name = target_name(node.target)
        if name in _DRIVER_TARGETS or registry.find_export("torch", name) is not None:
            continue
        stack = module_stack(node)
        where = stack[-1][0] if stack and stack[-1][0] else "<root module>"
        paths = missing.setdefault(name, [])
        if where not in paths:
            paths.append(where)
    if not missing:
        return
    lines = []
    for name, paths in sorted(missing.items()):
        shown = ", ".join(repr(p) for p in paths[:6]) + (" ..." if len(paths) > 6 else "")
        reason = UNSUPPORTED.get(name.rsplit(".", 1)[0]) or UNSUPPORTED.get(name)
        lines.append(f"  {name} in {shown}" + (f" ({reason})" if reason else ""))
    raise UnsupportedOpError(
        f"the torch backend cannot export {len(missing)} op(s) of this model:\n" + "\n".join(lines),
        [("torch", name, 0, paths) for name, paths in sorted(missing.items())],
    )


# -- dynamic shapes -------------------------------------------------------------------------------
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


def needs_decomposition(ep: torch.export.ExportedProgram, registry: Any,
                        skip: Collection[torch.fx.Node] = ()) -> str | None:
    """Why the training IR in ``ep`` cannot be exported as it is (``None``: it can).

    It can when every op has a primitive and none writes a tensor in place (a training-mode
    batch norm updating its running stats, an in-place op on a buffer): functionalizing those
    is what ``run_decompositions`` does besides decomposing. Nodes in ``skip`` (the
    module-primitive calls) are exported otherwise and not looked at.
    """
    for node, _ in _iter_fx(ep.graph_module):
        if node.op != "call_function" or node in skip:
            continue
        name = target_name(node.target)
        if name in _DRIVER_TARGETS:
            continue
        schema = getattr(node.target, "_schema", None)
        if schema is not None and schema.is_mutable:
            return f"{name} writes in place"
        if registry.find_export("torch", name) is None:
            return f"{name} has no primitive"
    sig = ep.graph_signature
    if sig.buffers_to_mutate or sig.user_inputs_to_mutate:
        return "the program mutates buffers or inputs"
    return None


def decomposed_away(target: str) -> bool:
    """Whether ``run_decompositions`` replaces ``target`` (so only the training IR has it): an op
    of its table, or one it decomposes through its CompositeImplicitAutograd kernel
    (``aten.batch_norm``, ``aten.dropout`` ...)."""
    packet, _, overload = target.removeprefix("aten.").rpartition(".")
    op = getattr(getattr(torch.ops.aten, packet, None), overload, None)
    if op is None:
        return False
    if op in decomposition_table():
        return True
    return target not in KEEP and torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")


def decomposition_table() -> Any:
    """``torch.export``'s default decompositions, less the ops in :data:`KEEP`."""
    table = torch.export.default_decompositions()
    for name in KEEP:
        packet, _, overload = name.removeprefix("aten.").rpartition(".")
        op = getattr(getattr(torch.ops.aten, packet), overload)
        if op in table:
            table.pop(op)
    return table


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
    :param dynamic_shapes: ``torch.export`` dynamic shapes (``Dim`` objects); dynamic dims become
        symbolic dims named after the ``Dim``.
    :param kwargs: keyword inputs for ``forward`` (exported as graph inputs too).
    :param strict: ``torch.export``'s strict (TorchDynamo) tracing.
    :param functions: emit a submodule called more than once (one block applied twice, a layer
        reused in a loop) as one model-local ONNX function (domain :data:`FUNCTION_DOMAIN`,
        named after the module's class and path) called by one node per call site; its weights
        are inputs of the function, so they stay one initializer each.
    :param optimize: fold constants and static shapes and drop no-ops
        (:func:`onnxport.optimize.optimize`); weights keep their names and values.
    :param fold_batchnorm: fold each inference BatchNormalization that follows a Conv (the Conv's
        only reader) into the Conv's weight and bias (:func:`onnxport.optimize.fold_batchnorm`).
        Off by default: the BatchNormalization's parameters disappear from the graph and the
        Conv weights change value, so the exported weights no longer match the state_dict.
        Only main-graph Convs fold: inside a ``functions=True`` function the weights are inputs.
    :param decompose: ``None`` (default): export ``torch.export``'s training IR as it is when
        every op of it has a primitive and nothing is written in place, else decompose to core
        ATen first (:func:`needs_decomposition`); ``True``: always decompose; ``False``: never
        (an op without a primitive is then an :class:`UnsupportedOpError`).
    """
    from onnxport import spec as _spec
    from onnxport.plugins import registry

    opset = DEFAULT_OPSET if opset is None else int(opset)
    newest = _spec.latest_opset()
    if not MIN_OPSET <= opset <= newest:
        raise ConversionError(f"opset {opset} is outside the supported range {MIN_OPSET}..{newest}")
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
    conv = _Converter(ep, reg, _dim_names(ep, _dim_specs(module, args, dynamic_shapes)), onnx_names)
    conv.module_calls = calls
    if functions:
        conv.plan = _FunctionPlan(ep.graph, calls)
    g = TorchGraph(opset, name=type(module).__name__, converter=conv)
    conv.run_main(g)
    model = g.model(producer="onnxport-torch")
    _restore_io_names(model, module)
    if fold_batchnorm:
        from onnxport.optimize import fold_batchnorm as _fold_batchnorm

        _fold_batchnorm(model)
    if optimize:
        from onnxport.optimize import optimize as _optimize

        _optimize(model, foldable=conv.constant_names)
    from onnxport_opsets.down import downgrade

    downgrade(model)
    for fn in model.functions.values():
        downgrade(ir.Model(fn.graph, ir_version=model.ir_version))
    check_opset(model)
    model.meta["onnxport.torch.targets"] = sorted(conv.used_targets)
    return model


def _restore_io_names(model: ir.Model, module: Any) -> None:
    """An imported OnnxModule exported again gets its graph input and output names back."""
    for attr, values in (("onnx_input_names", model.graph.inputs), ("onnx_output_names", model.graph.outputs)):
        names = getattr(module, attr, None)
        if not isinstance(names, list) or len(names) != len(values):
            continue
        taken = ({v.name for n in model.graph for v in n.outputs} | {v.name for v in model.graph.inputs}
                 | set(model.graph.initializers))
        for value, name in zip(values, names):
            if not name or value.name == name or name in taken:
                continue  # another value already holds that name: keep the traced one
            if value.is_initializer() or (value.producer() is None and not value.is_graph_input()):
                continue  # initializers keep their own (state_dict) names
            value.name = name
            taken.add(name)


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
class ExportSupport:
    """The torch backend's export side as the testkit calls it."""

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
        traced = model.meta.get("onnxport.torch.targets", [])
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
