"""Graph surgery on ONNX models, for every backend: cut, remove, replace, prune, sequential.

Every function takes a model in any form :func:`onnxport.load` accepts and returns a new
``onnx_ir.Model``; the caller's model is left as it was. Values and nodes are named by their
ONNX names. The result is validated (:func:`onnxport.driver.validate`) before it is returned.
"""

from __future__ import annotations

import os
from typing import Any

import onnx
import onnx_ir as ir

from . import driver as _convert
from . import io as _io
from .errors import BackendNotFoundError, ModelError


def _copy(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> ir.Model:
    if isinstance(model, ir.Model):
        return _io.load(ir.serde.serialize_model(model))
    return _io.load(model)


def _values(graph: ir.Graph) -> dict[str, ir.Value]:
    """Every named value of the main graph: inputs, initializers, node outputs."""
    out: dict[str, ir.Value] = {}
    for v in graph.inputs:
        if v.name:
            out[v.name] = v
    for name, v in graph.initializers.items():
        out.setdefault(name, v)
    for node in graph:
        for v in node.outputs:
            if v.name:
                out[v.name] = v
    return out


def _value(values: dict[str, ir.Value], name: str, what: str) -> ir.Value:
    if name not in values:
        sample = ", ".join(sorted(values)[:8])
        raise ModelError(f"{what} {name!r} is not a value of the graph (values include: {sample} ...)")
    return values[name]


def _node(graph: ir.Graph, name: str) -> ir.Node:
    found = [n for n in graph if n.name == name]
    if not found:
        sample = ", ".join(repr(n.name) for n in list(graph)[:8])
        raise ModelError(f"the graph has no node named {name!r} (nodes include: {sample} ...)")
    if len(found) > 1:
        raise ModelError(f"{len(found)} nodes are named {name!r}; name the node uniquely first")
    return found[0]


def _outer_reads(node: ir.Node) -> list[ir.Value]:
    """Values a node reads: its inputs and the outer-scope values its subgraphs capture."""
    reads = [v for v in node.inputs if v is not None]
    for attr in node.attributes.values():
        graphs = [attr.value] if attr.type == ir.AttributeType.GRAPH else (
            list(attr.value) if attr.type == ir.AttributeType.GRAPHS else [])
        for g in graphs:
            local: set[ir.Value] = set()
            for sub in _convert.iter_graphs(g):
                local.update(sub.inputs)
                local.update(sub.initializers.values())
                for n in sub:
                    local.update(n.outputs)
            for sub in _convert.iter_graphs(g):
                for n in sub:
                    reads.extend(v for v in n.inputs if v is not None and v not in local)
                reads.extend(v for v in sub.outputs if v not in local)
    return reads


def _finish(model: ir.Model) -> ir.Model:
    _remove_unused_initializers(model.graph)
    _convert.validate(model)
    return model


def _remove_unused_initializers(graph: ir.Graph) -> None:
    used: set[ir.Value] = set(graph.outputs)
    for node in graph:
        used.update(_outer_reads(node))
    for name, v in list(graph.initializers.items()):
        if v not in used and not v.is_graph_input():
            del graph.initializers[name]


# -- extract ---------------------------------------------------------------------------------
def extract(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    inputs: list[str],
    outputs: list[str],
) -> ir.Model:
    """The sub-model that computes ``outputs`` from ``inputs`` (a feature extractor, a cut).

    ``inputs`` may name graph inputs or intermediate values (which become graph inputs of the
    result, with their dtype and shape); initializers stay initializers. Raises
    :class:`~onnxport.ModelError` naming the output and the value when an output needs a value
    that is neither reachable from ``inputs`` nor an initializer.
    """
    m = _copy(model)
    _convert.infer_shapes(m)  # new graph inputs and outputs need their dtypes and shapes
    g = m.graph
    values = _values(g)
    if not outputs:
        raise ModelError("extract needs at least one output name")
    cut = [_value(values, n, "input") for n in inputs]
    outs = [_value(values, n, "output") for n in outputs]
    cut_set = set(cut)

    # walk back from every output to the cut, the initializers or a missing value
    needed: set[ir.Node] = set()
    for out in outs:
        stack, seen = [out], set()
        while stack:
            v = stack.pop()
            if v in seen or v in cut_set or v.is_initializer():
                continue
            seen.add(v)
            producer = v.producer()
            if producer is None:
                given = ", ".join(repr(n) for n in inputs) or "none"
                raise ModelError(
                    f"output {out.name!r} depends on {v.name!r} (a graph input), which is not among "
                    f"the given inputs ({given}) and not computed from them"
                )
            if producer not in needed:
                needed.add(producer)
                stack.extend(_outer_reads(producer))

    # cut values produced inside the kept part are fed from outside: new graph inputs
    new_inputs: list[ir.Value] = []
    for v in cut:
        if v.is_graph_input():
            new_inputs.append(v)
            continue
        if v.is_initializer():
            raise ModelError(f"input {v.name!r} is an initializer; name a graph input or a computed value")
        fresh = ir.Value(name=v.name, type=v.type, shape=v.shape)
        for user, idx in list(v.uses()):
            if user in needed:
                user.replace_input_with(idx, fresh)
        if v in outs:  # an input passed straight through
            outs = [fresh if o is v else o for o in outs]
        producer = v.producer()
        if producer is not None and producer in needed:
            v.name = f"{v.name}__computed"  # another output of its node is still needed
        new_inputs.append(fresh)

    g.outputs.clear()
    g.outputs.extend(outs)
    dead = [n for n in g if n not in needed]
    g.remove(dead, safe=True)
    g.inputs.clear()
    g.inputs.extend(new_inputs)
    return _finish(m)


# -- remove / replace ------------------------------------------------------------------------
def remove_node(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    name: str,
    passthrough_input: int = 0,
) -> ir.Model:
    """Remove node ``name``; readers of its (first) output read its input ``passthrough_input``.

    A graph output produced by the node keeps its name (an ``Identity`` takes the node's place).
    Raises :class:`~onnxport.ModelError` when another output of the node is used, when the input
    is missing, or when its dtype differs from the output's.
    """
    m = _copy(model)
    g = m.graph
    node = _node(g, name)
    label = _convert.node_label(node)
    if not 0 <= passthrough_input < len(node.inputs) or node.inputs[passthrough_input] is None:
        raise ModelError(f"node {label} has no input {passthrough_input} to pass through")
    for i, out in enumerate(node.outputs[1:], start=1):
        if out.uses() or out.is_graph_output():
            raise ModelError(f"node {label}: output {i} ({out.name!r}) is used; remove_node passes one value through")
    src = node.inputs[passthrough_input]
    out = node.outputs[0]
    if src.dtype is not None and out.dtype is not None and src.dtype != out.dtype:
        raise ModelError(
            f"node {label}: input {passthrough_input} ({src.name!r}) is {src.dtype}, its output "
            f"{out.name!r} is {out.dtype}; removing it would change a dtype"
        )
    if out.is_graph_output():
        ident = ir.Node("", "Identity", [src], name=node.name, num_outputs=1)
        g.insert_before(node, ident)
        new = ident.outputs[0]
        new.type, new.shape = out.type, out.shape
        out.replace_all_uses_with(new, replace_graph_outputs=True)
        out.name, new.name = None, out.name
    else:
        out.replace_all_uses_with(src)
    g.remove(node, safe=True)
    return _finish(m)


def replace_node(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    name: str,
    new_node: onnx.NodeProto | ir.Node,
) -> ir.Model:
    """Put ``new_node`` where node ``name`` was.

    ``new_node`` names its inputs by value name (any value the graph has); its outputs take over
    the old node's outputs in order, keeping their names. Give it fewer outputs only where the old
    ones are unused. An ``ir.Node`` is read through its proto form (its input values' names).
    """
    m = _copy(model)
    g = m.graph
    old = _node(g, name)
    label = _convert.node_label(old)
    proto = ir.serde.serialize_node(new_node) if isinstance(new_node, ir.Node) else new_node
    if not isinstance(proto, onnx.NodeProto):
        raise ModelError(f"replace_node takes an onnx.NodeProto or an onnx_ir.Node, got {type(new_node).__name__}")
    values = _values(g)
    downstream = _downstream(old)
    inputs: list[ir.Value | None] = []
    for i, vname in enumerate(proto.input):
        if not vname:
            inputs.append(None)
            continue
        v = _value(values, vname, f"input {i} of the new node")
        if v in downstream:
            raise ModelError(f"input {vname!r} of the new node is computed from node {label}: that would be a cycle")
        inputs.append(v)
    for i, out in enumerate(old.outputs[len(proto.output):], start=len(proto.output)):
        if out.uses() or out.is_graph_output():
            raise ModelError(f"node {label}: output {i} ({out.name!r}) is used, but the new node has {len(proto.output)} output(s)")
    tmp = ir.serde.deserialize_node(proto)
    new = ir.Node(
        proto.domain,
        proto.op_type,
        inputs,
        attributes=list(tmp.attributes.values()),
        num_outputs=len(proto.output),
        name=proto.name or old.name,
        overload=getattr(tmp, "overload", ""),
    )
    if new.domain not in ("", "ai.onnx") and new.domain not in m.opset_imports:
        raise ModelError(f"the new node's domain {new.domain!r} is not imported by the model (opset_imports: {dict(m.opset_imports)})")
    g.insert_before(old, new)
    for old_out, new_out in zip(old.outputs, new.outputs):
        keep = old_out.name
        old_out.replace_all_uses_with(new_out, replace_graph_outputs=True)
        old_out.name = None
        new_out.name = keep
    g.remove(old, safe=True)
    g.sort()
    return _finish(m)


def _downstream(node: ir.Node) -> set[ir.Value]:
    """Every value computed (directly or not) from ``node``'s outputs."""
    seen: set[ir.Value] = set()
    stack = list(node.outputs)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        for user, _ in v.uses():
            stack.extend(user.outputs)
    return seen


# -- prune -----------------------------------------------------------------------------------
def prune(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> ir.Model:
    """Drop nodes whose outputs reach no graph output, unused initializers and local functions."""
    from onnx_ir.passes.common import RemoveUnusedFunctionsPass, RemoveUnusedNodesPass

    m = _copy(model)
    RemoveUnusedNodesPass()(m)
    RemoveUnusedFunctionsPass()(m)
    return _finish(m)


# -- sequential --------------------------------------------------------------------------------
def linear_order(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> list[ir.Node]:
    """The nodes of a linear graph in order, each feeding only the next one.

    Linear: one graph input and one output; every node reads the previous node's output (plus
    initializers and constants) and its output is read by the next node only. Raises
    :class:`~onnxport.ModelError` naming the node where the chain branches or joins.
    """
    m = model if isinstance(model, ir.Model) else _io.load(model)
    g = m.graph
    runtime_inputs = [v for v in g.inputs if not v.is_initializer()]
    if len(runtime_inputs) != 1 or len(g.outputs) != 1:
        raise ModelError(
            f"a sequential model has one input and one output; this graph has inputs "
            f"{[v.name for v in runtime_inputs]} and outputs {[v.name for v in g.outputs]}"
        )
    static = _static_values(g)
    order: list[ir.Node] = []
    current = runtime_inputs[0]
    for node in g:
        if all(v in static for v in _outer_reads(node)):
            continue  # a constant computation, folded into its reader
        dynamic = [v for v in _outer_reads(node) if v not in static]
        label = _convert.node_label(node)
        if any(v is not current for v in dynamic):
            others = sorted({v.name or "<unnamed>" for v in dynamic if v is not current})
            raise ModelError(
                f"the graph is not linear at node {label}: it reads {others} besides the chain "
                f"value {current.name!r}"
            )
        users = [u for u, _ in current.uses()]
        if len({id(u) for u in users}) > 1 or (current.is_graph_output() and users):
            names = sorted({u.name or "<unnamed>" for u in users})
            raise ModelError(
                f"the graph is not linear: value {current.name!r} feeds several nodes {names} "
                f"(branching at node {label})"
            )
        used = [o for o in node.outputs if o.uses() or o.is_graph_output()]
        if len(used) != 1:
            raise ModelError(
                f"the graph is not linear at node {label}: {len(used)} of its outputs are used"
            )
        order.append(node)
        current = used[0]
    if current is not g.outputs[0]:
        raise ModelError(f"the chain ends at {current.name!r}, but the graph output is {g.outputs[0].name!r}")
    return order


def _static_values(g: ir.Graph) -> set[ir.Value]:
    """Initializers and what Constant-like nodes compute from them alone."""
    static: set[ir.Value] = {v for v in g.initializers.values()}
    for node in g:
        reads = _outer_reads(node)
        if node.op_type in ("Constant",) or (reads and all(v in static for v in reads)):
            static.update(node.outputs)
    return static


def to_sequential(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    backend: str = "torch",
    **options: Any,
) -> Any:
    """A model as the backend's sequential container (torch: ``nn.Sequential``).

    One step per ONNX node, native layers where the backend has them; weights are shared with
    nothing else. Blocks whose branches rejoin at one node (residual, concat, multi-branch) become
    nested containers (torch: ``Residual``/``Parallel``). Raises :class:`~onnxport.ModelError`
    naming the node where the graph is neither a chain nor such blocks.
    """
    from . import api
    from .surgery.blocks import block_structure

    m = _copy(model)
    block_structure(m)
    be = api.get_backend(backend)
    if not be.supports("to_sequential"):
        raise BackendNotFoundError(f"backend {backend!r} does not build sequential containers")
    plan = api.prepare(m, backend, **options)  # checks the options
    return be.to_sequential(plan, **options)


from .surgery import (  # noqa: E402 - size-aligned surgery lives in its own package
    Group,
    SizeAlignmentError,
    SizeGroups,
    channel_scores,
    insert_layer,
    prune_channels,
    remove_layer,
    size_groups,
    widen_channels,
)

__all__ = [
    "Group", "SizeAlignmentError", "SizeGroups", "channel_scores", "extract", "insert_layer", "linear_order", "prune",
    "prune_channels", "remove_layer", "remove_node", "replace_node", "size_groups", "to_sequential",
    "widen_channels",
]
