"""Which traced nodes form module calls: repeated submodule calls for ``functions=True`` (the
core groups and emits them, :mod:`onnxport.exporting.pipeline`) and calls of modules that a module
primitive exports whole (:mod:`.ops.export.modules`)."""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

from onnxport.exporting import pipeline as _export

from .export_graph import TorchGraph, class_name, module_path, target_name

#: the domain of the model-local functions ``functions=True`` writes
FUNCTION_DOMAIN = _export.function_domain("torch")

#: symbolic scalars (sizes and their arithmetic): ``torch.export`` computes one on outer values
#: once, in the first call that needs it, so such nodes stay outside the calls
_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


class FunctionGraph(_export.FunctionBody, TorchGraph):
    """The builder of a function body: a :class:`TorchGraph` whose initializers are Constants."""


def _signature(call: _export.ModuleCall) -> tuple[Any, ...]:
    """What must match for two calls to share one function body."""
    index = {n: i for i, n in enumerate(call.nodes)}
    ext = {n: i for i, n in enumerate(call.inputs)}

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

    body = tuple((target_name(n.target), norm(n.args), norm(n.kwargs), val(n)) for n in call.nodes)
    return (call.path, body, tuple(val(n) for n in call.inputs), tuple(index[n] for n in call.outputs))


def _inputs(node: torch.fx.Node) -> list[torch.fx.Node]:
    return node.all_input_nodes


def _users(node: torch.fx.Node) -> Any:
    return node.users


class FunctionPlan:
    """Which main-graph nodes belong to repeated submodule calls (``functions=True``).

    ``torch.export`` records each call of a submodule under its own ``nn_module_stack`` key
    (``L__self__block``, ``L__self__block@1`` ...) with the module's path: a path with several
    keys is a module called more than once. Nodes go to the call of their outermost such module;
    calls of one module whose traced bodies match share a function (:func:`onnxport.exporting.pipeline.group_calls`).
    A call holding part of a module-primitive call (``whole``), not all of it, is converted inline.
    """

    def __init__(self, graph: torch.fx.Graph | None = None, whole: dict[torch.fx.Node, Any] | None = None):
        self.calls: dict[torch.fx.Node, _export.ModuleCall] = {}
        self.groups: list[_export.CallGroup] = []
        if graph is not None:
            self._plan(graph, whole or {})

    def _plan(self, graph: torch.fx.Graph, whole: dict[torch.fx.Node, Any]) -> None:
        nodes = [n for n in graph.nodes if n.op == "call_function"]
        keys_of: dict[str, set[str]] = {}
        for node in nodes:
            for key, (path, _) in (node.meta.get("nn_module_stack") or {}).items():
                path = module_path(path)
                if path and not key.startswith("_empty_nn_module_stack"):
                    keys_of.setdefault(path, set()).add(key)
        repeated = {p for p, ks in keys_of.items() if len(ks) > 1}
        calls: dict[str, _export.ModuleCall] = {}
        for node in nodes:
            call = None
            target = target_name(node.target)
            if target == "operator.getitem" and node.args[0] in self.calls:
                call = self.calls[node.args[0]]
            elif isinstance(node.meta.get("val"), _SYMBOLIC) and not (set(node.all_input_nodes) & set(self.calls)):
                pass  # size arithmetic on outer values: torch.export computes it once for all calls
            else:
                for depth, (key, (path, cls)) in enumerate((node.meta.get("nn_module_stack") or {}).items()):
                    path = module_path(path)
                    if path in repeated:
                        if key not in calls:
                            cls_name = cls if isinstance(cls, str) else cls.__qualname__
                            calls[key] = _export.ModuleCall(key, path, cls_name, depth)
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
            call.finish(_inputs, _users)
        _export.drop_out_of_order(list(graph.nodes), _inputs, self.calls)
        self.groups = _export.group_calls(calls.values(), self.calls, _signature)


# -- module primitives ---------------------------------------------------------------------------
class PrimitiveCall:
    """One call of a module that a module primitive exports whole: its FX nodes (the last one is
    the call's only result read outside), the outer nodes whose tensors it reads, the module."""

    def __init__(self, prim: Any, module: torch.nn.Module, path: str, depth: int, nodes: list[torch.fx.Node],
                 inputs: list[torch.fx.Node]):
        self.prim, self.module, self.path, self.depth = prim, module, path, depth
        self.nodes, self.inputs = nodes, inputs


def module_primitive_calls(graph: torch.fx.Graph, root: Any) -> dict[torch.fx.Node, PrimitiveCall]:
    """Node -> the call it belongs to, for every call in ``graph`` (a main graph traced from
    ``root``) of a module that a module primitive exports (:mod:`.ops.export.modules`).

    A call is the main-graph nodes under one ``nn_module_stack`` key of the module (the outermost
    such module when they nest), less size arithmetic on outer values (``torch.export`` computes
    it once, in the first module that needs it); it is kept when its only result read outside is
    its last node and the primitive accepts it (its ``when``).
    """
    from onnxport.plugin.discovery import registry

    from .ops.export.modules import find_module_export

    reg = registry()
    prims = reg.module_exports("torch")
    if not prims or not isinstance(root, torch.nn.Module):
        return {}
    names = {p.key for p in prims}
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
                if class_name(cls) in names and not k.startswith("_empty_nn_module_stack"):
                    key = k
                    groups.setdefault(k, (module_path(path), depth, []))
                    break
        if key is not None:
            groups[key][2].append(node)
            member[node] = key
    calls: dict[torch.fx.Node, PrimitiveCall] = {}
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
        prim = find_module_export(reg, module, [a.meta["val"] for a in tensors])
        if prim is None:
            continue
        call = PrimitiveCall(prim, module, path, depth, nodes, tensors)
        calls.update((n, call) for n in nodes)
    return calls
