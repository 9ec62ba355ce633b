"""The import driver: validate, adapt every node to its canonical form, resolve primitives."""

from __future__ import annotations

import dataclasses
from typing import Any

import onnx_ir as ir

from ..errors import ModelError, UnsupportedOpError
from ..ir.walk import iter_graphs as iter_graphs  # re-exported: graph walking lives in ir.walk
from ..ir.walk import iter_model_graphs as iter_model_graphs
from ..ir.walk import iter_nodes as iter_nodes
from ..ir.walk import node_label as node_label
from ..plugin import spec as _spec
from ..plugin.adapt import VERSION_KEY as VERSION_KEY  # re-exported: adaptation lives in plugin.adapt
from ..plugin.adapt import AdaptContext as AdaptContext
from ..plugin.adapt import adapt as adapt
from ..plugin.adapt import model_opset as model_opset
from ..plugin.opfacts import NO_FOLD_OPS as NO_FOLD_OPS  # re-exported: the op facts live in opfacts
from ..plugin.opfacts import RANDOM_OPS as RANDOM_OPS
from ..plugin.opfacts import SETTING_INPUTS, STATISTICS_INPUTS, marked_not_trainable
from ..plugin.registry import ImportPrimitive, Registry

# -- what a backend may precompute (the op facts of :mod:`onnxport.plugin.opfacts`) -------------------


#: inputs whose initializers are no weights: settings and running statistics
NOT_WEIGHT_INPUTS: frozenset[tuple[str, int]] = SETTING_INPUTS | STATISTICS_INPUTS


def is_weight_use(value: ir.Value, settings: frozenset[tuple[str, int]] | set = NOT_WEIGHT_INPUTS) -> bool:
    """Whether a float initializer is read as a weight (trainable) somewhere, not only as a setting
    or running statistic, and no exporter marked it as no weight (:func:`onnxport.plugin.opfacts.mark_not_trainable`)."""
    if marked_not_trainable(value):
        return False
    uses = list(value.uses())
    if not uses:
        return value.is_graph_output()
    return any((u.node.op_type, u.idx) not in settings for u in uses)


def is_statistics(value: ir.Value) -> bool:
    """Whether an initializer holds running statistics (read at a statistics input, e.g.
    BatchNormalization's mean and variance): state a backend keeps apart from the weights."""
    return any((u.node.op_type, u.idx) in STATISTICS_INPUTS for u in value.uses())


# -- validation ---------------------------------------------------------------------------
def validate(model: ir.Model) -> bool:
    """Check what the importer relies on: known domains, defined values, no cycles; returns
    whether a graph was out of order (and was sorted)."""
    return _validate(model)[0]


def _validate(model: ir.Model) -> tuple[bool, list[ir.Graph]]:
    """:func:`validate`; and the graphs of :func:`iter_model_graphs`."""
    reordered = False
    graphs: list[ir.Graph] = []
    opsets = model.opset_imports
    functions = {(f.domain, f.name) for f in model.functions.values()}
    imported: set[str] = set()  # node domains found among the opset imports
    graph_kinds = (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS)
    for graph in iter_model_graphs(model):  # function bodies too: they may be kept as they are
        graphs.append(graph)
        # whether every node comes after the nodes it reads from (only for graphs without
        # subgraphs, whose captures sorting also orders): then there is no cycle either
        ordered = True
        seen: set[ir.Node] = set()
        for node in graph:
            if node.attributes and any(a.type in graph_kinds for a in node.attributes.values()):
                ordered = False
            call = bool(functions) and (node.domain, node.op_type) in functions
            if not call and node.domain not in imported:
                domain = _spec.normalize_domain(node.domain)
                if domain not in opsets and node.domain not in opsets:
                    raise ModelError(
                        f"node {node_label(node)} uses domain {node.domain or 'ai.onnx'!r}, which the "
                        f"model does not import (opset_imports: {dict(opsets)})"
                    )
                imported.add(node.domain)
            for i, value in enumerate(node.inputs):
                if value is None:
                    continue
                producer = value.producer()
                if producer is None:
                    if not call and not value.is_initializer() and not value.is_graph_input():
                        raise ModelError(
                            f"node {node_label(node)} input {i} reads value {value.name!r}, which no "
                            "node produces and which is neither a graph input nor an initializer "
                            "(missing initializer?)"
                        )
                elif ordered and producer not in seen:
                    ordered = False
            seen.add(node)
        if ordered:
            continue  # sorting would change nothing
        reordered = True
        try:
            graph.sort()
        except ValueError as exc:
            raise ModelError(f"graph {graph.name!r} contains a cycle: {exc}") from exc
    for out in model.graph.outputs:
        if out.producer() is None and not out.is_graph_input() and not out.is_initializer():
            raise ModelError(f"graph output {out.name!r} is produced by no node")
    return reordered, graphs


# -- attributes ---------------------------------------------------------------------------
def attr_value(attr: ir.Attr) -> Any:
    """An attribute as a plain Python value (tensors as numpy arrays, graphs as ir.Graph)."""
    t = attr.type
    v = attr.value
    if t in (ir.AttributeType.INTS, ir.AttributeType.FLOATS, ir.AttributeType.STRINGS):
        return list(v)
    if t == ir.AttributeType.TENSOR:
        return v.numpy()
    if t == ir.AttributeType.TENSORS:
        return [x.numpy() for x in v]
    if t == ir.AttributeType.GRAPHS:
        return list(v)
    return v


def node_attributes(node: ir.Node, op_spec: _spec.OpSpec | None) -> dict[str, Any]:
    """Keyword arguments for a primitive: the node's attributes plus the spec's defaults."""
    defaults, required = _attribute_facts(op_spec)
    out: dict[str, Any] = dict(defaults)
    attributes = node.attributes
    for name, attr in attributes.items() if attributes else ():
        if attr.is_ref():
            raise ModelError(f"node {node_label(node)}: attribute reference {name!r} outside a function")
        if op_spec is not None and name not in op_spec.attributes:
            raise ModelError(
                f"node {node_label(node)} has attribute {name!r}, which "
                f"{node.op_type}-{op_spec.since_version} does not define"
            )
        out[_spec.py_name(name)] = attr_value(attr)
    for name in required:
        if name not in attributes:
            raise ModelError(f"node {node_label(node)} lacks required attribute {name!r}")
    return out


#: per spec (kept alive here, so its id stays its own): its attribute defaults by Python name,
#: and its required attributes
_ATTRIBUTE_FACTS: dict[int, tuple[_spec.OpSpec, dict[str, Any], tuple[str, ...]]] = {}


def _attribute_facts(op_spec: _spec.OpSpec | None) -> tuple[dict[str, Any], tuple[str, ...]]:
    if op_spec is None:
        return {}, ()
    found = _ATTRIBUTE_FACTS.get(id(op_spec))
    if found is None:
        found = _ATTRIBUTE_FACTS[id(op_spec)] = (
            op_spec,
            {a.py_name: a.default for a in op_spec.attributes.values()},
            tuple(name for name, a in op_spec.attributes.items() if a.required),
        )
    return found[1], found[2]


# -- the plan ------------------------------------------------------------------------------
@dataclasses.dataclass
class NodeInfo:
    """A node resolved for one backend: its primitive, canonical spec and attributes."""

    node: ir.Node
    primitive: ImportPrimitive
    spec: _spec.OpSpec | None
    attributes: dict[str, Any]
    opset: int
    version: int


class ImportPlan:
    """A validated, adapted model and the primitive each node dispatches to."""

    def __init__(self, model: ir.Model, backend: str, registry: Registry, options: dict[str, Any]):
        self.model = model
        self.backend = backend
        self.registry = registry
        self.options = options
        self._info: dict[int, NodeInfo] = {}
        self._found: dict[tuple[str, str, int], ImportPrimitive | None] = {}
        #: per (domain, op, version): the op's spec (None: none); per domain: the model's opset
        self._specs: dict[tuple[str, str, int], _spec.OpSpec | None] = {}
        self._opsets: dict[str, int] = {}

    def find_import(self, domain: str, op_type: str, version: int) -> ImportPrimitive | None:
        """The backend's primitive for an op at a version (looked up once per op and version)."""
        key = (domain, op_type, version)
        if key not in self._found:
            self._found[key] = self.registry.find_import(self.backend, domain, op_type, version)
        return self._found[key]

    def info(self, node: ir.Node) -> NodeInfo:
        """Primitive, spec and attributes of a node (cached)."""
        key = id(node)
        found = self._info.get(key)
        if found is not None:
            return found
        domain = _spec.normalize_domain(node.domain)
        opset = self._opsets.get(domain)
        if opset is None:
            opset = self._opsets[domain] = model_opset(self.model, domain)
        version = node.meta.get(VERSION_KEY, opset)
        op = (domain, node.op_type, version)
        prim = self.find_import(*op)
        if prim is None:
            raise UnsupportedOpError(
                f"no {self.backend} primitive for {node_label(node)} at version {version}"
            )
        if op in self._specs:
            op_spec = self._specs[op]
        else:
            op_spec = self._specs[op] = (
                _spec.get_spec(node.op_type, version, domain)
                if _spec.has_spec(node.op_type, version, domain)
                else None
            )
        found = self._info[key] = NodeInfo(node, prim, op_spec, node_attributes(node, op_spec), opset, version)
        return found

    def check_supported(self, graphs: list[ir.Graph] | None = None) -> None:
        """Raise one error listing every op of the model that the backend lacks (``graphs``:
        the model's graphs, where the caller has them)."""
        missing: dict[tuple[str, str, int], list[str]] = {}
        local = {(f.domain, f.name) for f in self.model.functions.values()}
        opsets: dict[str, tuple[str, int]] = {}  # per node domain: the normalized domain and its opset
        supported: set[tuple[str, str, int]] = set()  # (node domain, op, version) with a primitive
        for node in (n for g in (iter_model_graphs(self.model) if graphs is None else graphs) for n in g):
            op = (node.domain, node.op_type)
            if local and op in local:
                continue  # a call of a kept local function: its body's nodes are checked
            found = opsets.get(node.domain)
            if found is None:
                domain = _spec.normalize_domain(node.domain)
                found = opsets[node.domain] = (domain, model_opset(self.model, domain))
            domain, opset = found
            version = node.meta.get(VERSION_KEY, opset)
            if (*op, version) in supported:
                continue
            if self.find_import(domain, node.op_type, version) is None:
                missing.setdefault((domain, node.op_type, opset), []).append(node.name or "<unnamed>")
            else:
                supported.add((*op, version))
        if not missing:
            return
        lines = []
        entries = []
        # only backends already loaded are asked: loading another one imports its framework
        # (seconds and a gigabyte for TensorFlow), too much to spend on an error message
        unloaded = [b for b in self.registry.unloaded_backends() if b != self.backend]
        for (domain, op, opset), names in sorted(missing.items()):
            others = [
                b for b in self.registry.backends_supporting(domain, op, 10**6, load=False)
                if b != self.backend
            ]
            shown = ", ".join(repr(n) for n in names[:5]) + (" ..." if len(names) > 5 else "")
            where = f"supported by: {', '.join(others)}" if others else "no loaded backend supports it"
            if unloaded:
                where += f" (not checked: {', '.join(unloaded)})"
            lines.append(f"  {domain or 'ai.onnx'}::{op} (opset {opset}) at nodes {shown}; {where}")
            entries.append((domain, op, opset, names))
        raise UnsupportedOpError(
            f"backend {self.backend!r} cannot import {len(missing)} op(s) of this model:\n"
            + "\n".join(lines),
            entries,
        )


def infer_shapes(model: ir.Model, strict: bool = True, source: Any = None) -> None:
    """Fill in dtypes and shapes with ONNX shape inference; refuse declared types it contradicts.

    ``source``: the ``ModelProto`` the model was loaded from, when the graph is unchanged since
    (read instead of serializing the model again).
    """
    from ..ir.shapes import infer_shapes as _infer

    _infer(model, strict=strict, source=source)


def share_initializers(model: ir.Model, graphs: list[ir.Graph] | None = None) -> bool:
    """Readers of ``y = Identity(w)`` on an initializer ``w`` read ``w`` itself.

    The TorchScript exporter de-duplicates equal weights (tied embeddings, equal biases) this way;
    reading the initializer directly keeps them one shared weight in every backend. Returns
    whether a node was removed. ``graphs``: the model's graphs, where the caller has them.
    """
    changed = False
    for graph in list(iter_model_graphs(model)) if graphs is None else graphs:
        for node in list(graph):
            if node.op_type != "Identity" or node.domain not in ("", "ai.onnx") or len(node.inputs) != 1:
                continue
            src, out = node.inputs[0], node.outputs[0]
            if src is None or not src.is_initializer() or out.is_graph_output():
                continue
            out.replace_all_uses_with(src)
            graph.remove(node, safe=True)
            changed = True
    return changed


def prepare(model: ir.Model, backend: str, registry: Registry, **options: Any) -> ImportPlan:
    """Validate, inline local functions, adapt and check support: ready for a backend."""
    from ..ir.io import SOURCE_KEY

    source = model.meta.pop(SOURCE_KEY, None)  # the proto it was loaded from, if any
    reordered, graphs = _validate(model)
    if reordered:
        source = None
    from ..ir.model_checks import check_constant_types
    from ..ir.safety import check_shape_attributes

    check_shape_attributes((n for g in graphs for n in g), node_label)
    if check_constant_types(graphs):
        source = None  # the proto still declares what was replaced
    keep = options.get("keep_functions")
    if keep is None:  # the backend's default: torch keeps functions as reusable submodules
        be = registry.backends.get(backend)
        keep = be.keep_functions if be is not None else False
    inlined = bool(model.functions)
    if model.functions:
        from onnx_ir.passes.common import InlinePass

        from ..ir.model_checks import check_function_calls

        check_function_calls(model, graphs)  # the same refusal whether a backend inlines or keeps them

        # a function with attribute parameters differs per call site: its calls are inlined
        InlinePass(None if not keep else (lambda f: bool(f.attributes)))(model)
        graphs = list(iter_model_graphs(model))
    from onnx_ir.passes.common import RemoveInitializersFromInputsPass

    RemoveInitializersFromInputsPass()(model)  # the inference proto is built the same way from either
    if share_initializers(model, graphs) or inlined:
        source = None  # the graph no longer is the proto's
    if options.get("infer_shapes", True):
        infer_shapes(model, strict=options.get("strict", True), source=source)
    from ..ir.safety import check_static_outputs

    check_static_outputs((n for g in graphs for n in g), node_label)  # sized here, not per call
    if adapt(model, registry, graphs) or inlined:  # validate() sorted the graphs; only a rewrite unsorts them
        graphs = list(iter_model_graphs(model))  # an adapter may have written new subgraphs
        for graph in graphs:
            graph.sort()
    plan = ImportPlan(model, backend, registry, options)
    plan.check_supported(graphs)
    return plan
