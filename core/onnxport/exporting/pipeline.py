"""The export pipeline every exporter shares: from a raw built graph to the model written out.

An exporter (torch, JAX, TensorFlow) does two things only: it traces its framework, and it maps
each traced op to ONNX nodes through a :class:`onnxport.exporting.builder.Builder` (the ``g`` its export
primitives receive). Everything after that is framework-free and lives here:

1. :func:`choose_opset` - the default-domain opset (``None`` -> :data:`DEFAULT_OPSET`), checked
   against :data:`MIN_OPSET` .. the newest one onnx knows. Call it before building: primitives
   read ``g.opset``.
2. :func:`finish` - takes the builder's model (``g.model(...)``) and an :class:`ExportOptions`:
   gives graph inputs/outputs their requested names, folds BatchNormalization into Conv
   (``fold_batchnorm``), optimizes (constant folding, no-ops; ``foldable`` names the
   initializers that are lifted literals, never weights), down-converts every node that the
   target opset lacks in its newest form through the down-adapters registered in the registry
   (main graph, subgraphs and model-local functions), checks that every remaining op exists at
   that opset, and records which framework ops were traced (:func:`targets_key`).

A minimal exporter::

    from onnxport.exporting import pipeline as ex
    from onnxport.exporting.builder import Builder

    def export_model(obj, example_inputs, **kw):
        options = ex.ExportOptions.from_kwargs(kw)          # opset, optimize, functions ...
        g = Builder(ex.choose_opset(options.opset), name="main")
        ...                                                  # trace; call one primitive per op
        return ex.finish(g.model(producer="onnxport-mine"), options,
                         backend="mine", targets=used_ops)

The ``functions=True`` plan (a submodule called more than once becomes one model-local
function) is split the same way: the exporter finds its framework's calls (a list of
:class:`ModuleCall`, with a signature saying when two calls have the same body); the core
groups them (:func:`group_calls`), drops calls that cannot be emitted at their last node
(:func:`drop_out_of_order`), builds the bodies with a :class:`FunctionBody` builder and adds
them with :func:`add_function`.

Metadata: node-level module hierarchy is written under :data:`NAME_SCOPES_KEY` and
:data:`CLASS_HIERARCHY_KEY` (:func:`scope_metadata`); importers read the same keys.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir

from .. import progress
from ..errors import ConversionError
from .builder import Builder, array_tensor, attribute, check_opset, is_tensor

#: The opset written when none is asked for, and the oldest one exporters support.
DEFAULT_OPSET = 18
MIN_OPSET = 13

#: Node ``metadata_props`` keys holding the module hierarchy (the ones torch.onnx writes, so
#: importers read both): JSON lists from the root module down to the op - module paths, then
#: the classes of those modules.
NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY_KEY = "pkg.torch.onnx.class_hierarchy"

#: The domain prefix of the model-local functions an exporter writes (``pkg.onnxport.torch``).
FUNCTION_DOMAIN_PREFIX = "pkg.onnxport"


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block (enabled again after, when it was).

    Tracing and building a graph allocate many objects that reference counting frees; the
    collections they set off walk the process's live objects (a framework's modules included):
    about 6% of a JAX export of the benchmark models. Cycles made inside are collected after.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def function_domain(backend: str) -> str:
    """The domain of the model-local functions ``backend`` writes for ``functions=True``."""
    return f"{FUNCTION_DOMAIN_PREFIX}.{backend}"


def targets_key(backend: str) -> str:
    """The ``model.meta`` key listing the framework ops ``backend`` traced (the testkit reads it)."""
    return f"onnxport.{backend}.targets"


def scope_metadata(paths: Sequence[str], classes: Sequence[str]) -> dict[str, str]:
    """Node metadata for the module hierarchy: ``paths`` and ``classes`` from the root down."""
    return {NAME_SCOPES_KEY: json.dumps(list(paths)), CLASS_HIERARCHY_KEY: json.dumps(list(classes))}


def choose_opset(opset: int | None) -> int:
    """The default-domain opset to export: ``opset``, or :data:`DEFAULT_OPSET`; raises
    :class:`ConversionError` outside :data:`MIN_OPSET` .. the newest onnx knows."""
    from ..plugin import spec as _spec

    chosen = DEFAULT_OPSET if opset is None else int(opset)
    newest = _spec.latest_opset()
    if not MIN_OPSET <= chosen <= newest:
        raise ConversionError(f"opset {chosen} is outside the supported range {MIN_OPSET}..{newest}")
    return chosen


@dataclasses.dataclass
class ExportOptions:
    """The framework-free export options every exporter accepts.

    :param opset: the default-domain opset (see :func:`choose_opset`).
    :param optimize: fold constants and static shapes, drop no-ops (:func:`onnxport.exporting.passes.optimize.optimize`).
    :param fold_batchnorm: fold inference BatchNormalization into the Conv before it
        (:func:`onnxport.exporting.passes.optimize.fold_batchnorm`); off by default, weights change value.
    :param functions: emit a module called more than once as one model-local function.
    :param fuse: rewrite decomposed layers into the ONNX ops that name them (layer norm ->
        LayerNormalization, GELU -> Gelu, MatMul + bias -> Gemm, attention -> Attention, an
        LSTM loop -> LSTM; :mod:`onnxport.exporting.fusions.patterns`), in the main graph, subgraphs and
        functions, where the opset has them; ``None``: the exporter's default.
    :param input_names: names for the graph inputs, in order (``None`` or ``""``: keep).
    :param output_names: names for the graph outputs, in order.
    """

    opset: int | None = None
    optimize: bool = True
    fold_batchnorm: bool = False
    functions: bool = False
    fuse: bool | None = None
    input_names: Sequence[str | None] | None = None
    output_names: Sequence[str | None] | None = None

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> ExportOptions:
        """The options found in ``kwargs`` (popped from it; the rest is the exporter's own)."""
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{n: kwargs.pop(n) for n in names if n in kwargs})


def finish(
    model: ir.Model,
    options: ExportOptions,
    *,
    backend: str,
    foldable: Iterable[str] = (),
    targets: Iterable[str] = (),
    registry: Any = None,
    fuse_default: bool | Collection[str] = False,
    constant_initializers: bool = False,
) -> ir.Model:
    """Run the pipeline on a freshly built model (in place) and return it.

    :param model: what the exporter's :class:`Builder` made (``g.model()``).
    :param options: the export options.
    :param backend: the exporting backend's name (for the traced-ops record).
    :param foldable: initializers holding lifted literals, which optimizing may fold.
    :param targets: the framework ops that were traced, recorded under :func:`targets_key`.
    :param registry: where down-adapters come from (default: the process registry).
    :param fuse_default: whether patterns are fused when ``options.fuse`` is ``None``: all of
        them (``True``) or the fusions named (:func:`onnxport.exporting.fusions.patterns.fuse_named`).
    :param constant_initializers: with ``options.optimize``, the main graph's Constant nodes end
        as initializers (:func:`onnxport.exporting.passes.optimize.constants_to_initializers`; marked as no weights).
    """
    progress.stage("optimize")
    rename_io(model, options.input_names, options.output_names)
    if options.fold_batchnorm:
        from .passes.optimize import fold_batchnorm

        fold_batchnorm(model)
    if options.optimize:
        from .passes.optimize import optimize

        optimize(model, foldable=foldable)
    fuse = options.fuse if options.fuse is not None else fuse_default
    if fuse:
        from .fusions.patterns import fuse_named, fuse_patterns

        fused = fuse_patterns(model) if fuse is True else fuse_named(model, fuse)
        if fused.get("BatchNormalization") and options.fold_batchnorm:
            from .passes.optimize import fold_batchnorm

            fold_batchnorm(model)  # the batch norms the fusion found
    progress.stage("check")
    downgrade(model, registry)
    if options.optimize and constant_initializers:
        from .passes.optimize import constants_to_initializers

        constants_to_initializers(model)
    check_opset(model)
    model.meta[targets_key(backend)] = sorted(set(targets))
    return model


def rename_io(model: ir.Model, input_names: Sequence[str | None] | None,
              output_names: Sequence[str | None] | None) -> None:
    """Give graph inputs and outputs the names asked for (a list as long as they are).

    A name another value already holds is skipped (the traced name stays); initializers and
    outputs that are plain constants keep their own names.
    """
    for names, values in ((input_names, model.graph.inputs), (output_names, model.graph.outputs)):
        if names is None or len(names) != len(values):
            continue
        graph = model.graph
        taken = {v.name for n in graph for v in n.outputs} | {v.name for v in graph.inputs} | set(graph.initializers)
        for value, name in zip(values, names):
            if not name or value.name == name or name in taken:
                continue
            if value.is_initializer() or (value.producer() is None and not value.is_graph_input()):
                continue
            value.name = name
            taken.add(name)


# -- down-conversion ------------------------------------------------------------------------------
def downgrade(model: ir.Model, registry: Any = None) -> int:
    """Rewrite every node whose newest form the model's opset lacks, through the registered
    down-adapters (``Registry.down_adapters``), in the main graph, its subgraphs and the
    model-local functions; returns the number of nodes rewritten."""
    opset = model.opset_imports.get("", None)
    if opset is None:
        return 0
    if registry is None:
        from ..plugin.discovery import registry as _registry

        registry = _registry()
    from ..ir.walk import iter_graphs

    total = 0
    for top in [model.graph, *(fn.graph for fn in model.functions.values())]:
        count = 0
        for graph in list(iter_graphs(top)):
            ctx = DownContext(graph, opset)
            for node in list(graph):
                if node.domain:
                    continue
                for rule in registry.down_adapters(node.op_type):
                    if opset < rule.below:
                        rule.fn(node, ctx)
                        count += 1
                        break
            if count:
                _drop_dead_constants(graph)
        total += count
    return total


def convert_opset(model: ir.Model, opset: int, registry: Any = None) -> ir.Model:
    """``model`` (in place) in default-domain ``opset``: every node lifted to its op's newest form
    through the import adapters, then rewritten through the down-adapters where ``opset`` lacks
    that form; raises :class:`ConversionError` when an op does not exist at ``opset``."""
    from ..plugin.adapt import adapt

    if registry is None:
        from ..plugin.discovery import registry as _registry

        registry = _registry()
    if "ai.onnx" in model.opset_imports and "" not in model.opset_imports:
        model.opset_imports[""] = model.opset_imports.pop("ai.onnx")
    adapt(model, registry)
    model.opset_imports[""] = int(opset)
    downgrade(model, registry)
    check_opset(model)
    import onnx

    try:  # a form change without a down-adapter shows here
        onnx.checker.check_model(ir.serde.serialize_model(model))
    except onnx.checker.ValidationError as exc:
        raise ConversionError(f"the model cannot be written at opset {opset} (no down-adapter for a node's "
                              f"newer form?): {str(exc).splitlines()[0]}") from exc
    return model


class DownContext:
    """Node creation and replacement inside one graph, for a down-adapter."""

    def __init__(self, graph: ir.Graph, opset: int):
        self.graph = graph
        self.opset = opset
        self._new: list[ir.Node] = []
        self._count = 0

    def op(self, op_type: str, *inputs: ir.Value | None, outputs: int = 1, **attributes: Any) -> Any:
        """A new node (inserted before the node being replaced); its output value(s)."""
        attrs = [attribute(k, v) for k, v in attributes.items() if v is not None]
        node = ir.Node("", op_type, list(inputs), attributes=attrs, num_outputs=outputs)
        self._new.append(node)
        return node.outputs[0] if outputs == 1 else tuple(node.outputs)

    def const(self, value: Any, dtype: Any = None) -> ir.Value:
        arr = np.asarray(value, dtype=dtype)
        tensor = array_tensor(arr)
        out = self.op("Constant", value=tensor)
        out.const_value = tensor
        return out

    def replace(self, node: ir.Node, outputs: list[ir.Value]) -> None:
        """Put the nodes made since the last call where ``node`` was; ``outputs`` take its place."""
        base = node.name or node.op_type
        for i, new in enumerate(self._new):
            new.name = f"{base}/{new.op_type}_{i}"
            new.metadata_props.update(node.metadata_props)
            for out in new.outputs:
                if out.name is None:
                    self._count += 1
                    out.name = f"{base}_down_{self._count}"
        self.graph.insert_before(node, self._new)
        self._new = []
        for old, new in zip(node.outputs, outputs):
            name = old.name
            new.type, new.shape = old.type, old.shape
            old.replace_all_uses_with(new, replace_graph_outputs=True)
            old.name = None
            new.name = name
        self.graph.remove(node, safe=True)


def _drop_dead_constants(graph: ir.Graph) -> None:
    """Remove Constant nodes whose values the rewritten nodes no longer read."""
    for node in reversed(list(graph)):
        if node.op_type == "Constant" and not node.domain:
            out = node.outputs[0]
            if not out.uses() and not out.is_graph_output():
                graph.remove(node, safe=True)


# -- model-local functions (``functions=True``) -------------------------------------------------
class ModuleCall:
    """One call of a module: its traced nodes (any hashable), the outer nodes it reads and its
    nodes read after it. ``key`` tells calls apart, ``path``/``cls`` name the module."""

    def __init__(self, key: str, path: str, cls: str, depth: int):
        self.key, self.path, self.cls, self.depth = key, path, cls, depth
        self.nodes: list[Any] = []
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        self.group: CallGroup | None = None

    def finish(self, inputs_of: Callable[[Any], Iterable[Any]], users_of: Callable[[Any], Iterable[Any]]) -> None:
        """Fill :attr:`inputs` and :attr:`outputs` from the nodes' data flow."""
        members = set(self.nodes)
        for node in self.nodes:
            for a in inputs_of(node):
                if a not in members and a not in self.inputs:
                    self.inputs.append(a)
            if any(u not in members for u in users_of(node)):
                self.outputs.append(node)


class CallGroup:
    """Calls of one module with the same body: one function named :attr:`name`."""

    def __init__(self, name: str):
        self.name = name
        self.calls: list[ModuleCall] = []
        self.function: ir.Function | None = None
        #: input / output positions holding framework constants instead of ONNX values
        self.baked_inputs: dict[int, Any] = {}
        self.baked_outputs: dict[int, Any] = {}


def group_calls(calls: Iterable[ModuleCall], by_node: dict[Any, ModuleCall],
                signature: Callable[[ModuleCall], Hashable]) -> list[CallGroup]:
    """Group the calls still planned (``by_node``: node -> its call) by ``signature``; a call
    whose body matches no other call's is dropped from ``by_node`` (converted inline). Groups
    are named ``<Class>_<path>`` (unique)."""
    by_sig: dict[Hashable, list[ModuleCall]] = {}
    for call in calls:
        if by_node.get(call.nodes[0]) is call:
            by_sig.setdefault(signature(call), []).append(call)
    names: set[str] = set()
    groups: list[CallGroup] = []
    for group_calls_ in by_sig.values():
        if len(group_calls_) < 2:
            for call in group_calls_:
                for n in call.nodes:
                    by_node.pop(n, None)
            continue
        first = group_calls_[0]
        base = re.sub(r"\W", "_", f"{first.cls.rsplit('.', 1)[-1]}_{first.path}")
        name, i = base, 0
        while name in names:
            i += 1
            name = f"{base}_{i}"
        names.add(name)
        group = CallGroup(name)
        for call in group_calls_:
            call.group = group
            group.calls.append(call)
        groups.append(group)
    return groups


def drop_out_of_order(nodes: Sequence[Any], inputs_of: Callable[[Any], Iterable[Any]],
                      by_node: dict[Any, ModuleCall]) -> None:
    """Calls are emitted at their last node; drop from ``by_node`` (convert inline) every call
    that would then come after a node that reads its results. ``nodes`` is the graph's order."""
    order = {n: i for i, n in enumerate(nodes)}
    changed = True
    while changed:
        changed = False

        def at(n: Any) -> int:
            c = by_node.get(n)
            return order[c.nodes[-1]] if c is not None else order[n]

        for node in nodes:
            for a in inputs_of(node):
                mine, theirs = by_node.get(node), by_node.get(a)
                if mine is not None and mine is theirs:
                    continue
                if at(a) >= at(node):
                    victim = theirs if theirs is not None else mine
                    for n in victim.nodes:
                        by_node.pop(n, None)
                    changed = True
                    break
            if changed:
                break


class FunctionBody(Builder):
    """A builder for a function body, mixed in before an exporter's builder class: tensors a
    primitive would store as initializers become Constant nodes (a function cannot read the
    main graph's initializers), and names are scoped to the body."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._names, self._node_names = set(), set()

    def initializer(self, name: str, tensor: Any, *, key: Any = None) -> ir.Value:
        if not is_tensor(tensor):
            tensor = array_tensor(np.asarray(tensor), name=name)
        out = self.op("Constant", value=tensor)
        out.const_value, out.dtype, out.shape = tensor, tensor.dtype, ir.Shape(list(tensor.shape))
        return out


def add_function(g: Builder, body: Builder, name: str, domain: str) -> ir.Function:
    """Make ``body`` (inputs, nodes, outputs) the model-local function ``domain::name`` of the
    model ``g`` builds; returns it. Call nodes are then ``g.op(name, ..., domain=domain)``."""
    imports = {"": g.opset}
    for node in body.nodes:  # a body calling other functions (nested calls) imports their domain
        if node.domain:
            imports.setdefault(node.domain, g.opset_imports.get(node.domain, 1))
    graph = ir.Graph(body.inputs, body.outputs, nodes=body.nodes, opset_imports=imports, name=name)
    fn = ir.Function(domain, name, graph=graph, attributes=[])
    g.functions[(domain, name, "")] = fn
    g.opset_imports.setdefault(domain, 1)
    return fn


def same_constant(a: Any, b: Any) -> bool:
    """Whether two non-ONNX call inputs (numbers, tuples ...) are the same constant."""
    if isinstance(a, ir.Value) or isinstance(b, ir.Value):
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare are not the same constant
        return a is b


def metadata_of(stack: Sequence[tuple[str, str]]) -> dict[str, str]:
    """:func:`scope_metadata` of a module stack ``[(path, class), ...]`` from the root down."""
    return scope_metadata([p for p, _ in stack], [c for _, c in stack])
