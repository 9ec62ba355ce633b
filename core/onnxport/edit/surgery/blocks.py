"""The block structure of a graph: chains of nodes, with forks that rejoin (residual, parallel).

Backends build nested containers from it (``onnxport.to_sequential``): a chain becomes a
sequential container, a fork whose branches rejoin at one node becomes a block holding the
branches and the joining node; a branch may be empty (a residual shortcut).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import onnx
import onnx_ir as ir

from ...errors import ModelError
from ...ir import io as _io
from ..graph import _outer_reads, _static_values, extract
from ._model import label


@dataclass
class Step:
    """One node reading the chain value."""
    node: ir.Node


@dataclass
class Branches:
    """Branches from one value, rejoined by ``join``; ``branches[i]`` feeds the join's i-th run-time input."""
    branches: list[list[Step | Branches]]
    join: ir.Node

    @property
    def residual(self) -> bool:
        """Two branches, one of them the value itself (a shortcut)."""
        return len(self.branches) == 2 and any(not b for b in self.branches)


Block = list[Step | Branches]


def block_structure(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> Block:
    """The graph as a chain of steps and rejoining branches.

    The graph has one run-time input and one output. Raises :class:`~onnxport.ModelError` naming
    the node where it is neither (a join of values from different forks, a value read after the
    output ...).
    """
    m = model if isinstance(model, ir.Model) else _io.load(model)
    g = m.graph
    inputs = [v for v in g.inputs if not v.is_initializer()]
    if len(inputs) != 1 or len(g.outputs) != 1:
        raise ModelError(f"a sequential model has one input and one output; this graph has inputs "
                         f"{[v.name for v in inputs]} and outputs {[v.name for v in g.outputs]}")
    static = _static_values(g)
    order = {n: i for i, n in enumerate(g)}

    def dynamic(node: ir.Node) -> list[ir.Value]:
        out: list[ir.Value] = []
        for v in _outer_reads(node):
            if v not in static and v not in out:
                out.append(v)
        return out

    def users(v: ir.Value) -> list[ir.Node]:
        found = {id(u): u for u, _ in v.uses() if not all(x in static for x in _outer_reads(u))}
        return sorted(found.values(), key=order.__getitem__)

    def output_of(node: ir.Node) -> ir.Value:
        used = [o for o in node.outputs if o.uses() or o.is_graph_output()]
        if len(used) != 1:
            raise ModelError(f"node {label(node)} hands {len(used)} values on; a block passes one")
        return used[0]

    def chain(v: ir.Value, first: ir.Node | None) -> tuple[Block, ir.Value, ir.Node | None]:
        """Steps from ``v`` (through ``first``) to the graph output or to a join it does not own."""
        items: Block = []
        if first is not None:
            items.append(Step(first))
            v = output_of(first)
        while True:
            readers = users(v)
            if v.is_graph_output():
                if readers:
                    raise ModelError(f"the graph output {v.name!r} is also read by node {label(readers[0])}")
                return items, v, None
            if not readers:
                raise ModelError(f"value {v.name!r} reaches neither the output nor a join")
            if len(readers) == 1:
                node = readers[0]
                if len(dynamic(node)) > 1:
                    return items, v, node
                items.append(Step(node))
                v = output_of(node)
                continue
            ends: dict[ir.Value, Block] = {}
            joins: set[ir.Node] = set()
            for node in readers:
                if len(dynamic(node)) > 1:  # reads the fork value directly: an empty branch
                    ends[v] = []
                    joins.add(node)
                    continue
                body, end, join = chain(v, node)
                if join is None:
                    raise ModelError(f"the branch through node {label(node)} from {v.name!r} does not rejoin")
                if end in ends:
                    raise ModelError(f"two branches from {v.name!r} end at the same value {end.name!r}")
                ends[end] = body
                joins.add(join)
            join = next(iter(joins))
            if len(joins) > 1 or set(dynamic(join)) != set(ends):
                names = ", ".join(sorted(label(j) for j in joins))
                raise ModelError(f"the branches from {v.name!r} rejoin at {names} together with other values; "
                                 "only forks that rejoin at one node form a block")
            items.append(Branches([ends[x] for x in dynamic(join)], join))
            v = output_of(join)

    items, end, join = chain(inputs[0], None)
    if join is not None:
        raise ModelError(f"node {label(join)} joins {[x.name for x in dynamic(join)]}, which do not branch "
                         "from one value")
    return items


def is_linear(block: Block) -> bool:
    return all(isinstance(item, Step) for item in block)


def residual_body(item: Branches) -> int | None:
    """The body branch of a residual block (two branches joined by Add: the longer one), else None."""
    if item.join.op_type == "Add" and len(item.branches) == 2:
        return 0 if len(item.branches[0]) >= len(item.branches[1]) else 1
    return None


T = TypeVar("T")


def _opsets(model: ir.Model) -> dict[str, int]:
    out = dict(model.opset_imports)
    out[""] = max(out.get("", 0), onnx.defs.onnx_opset_version())
    return out


def nest(
    model: ir.Model,
    step: Callable[[ir.Model, ir.Node], T],
    sequential: Callable[[list[T]], T],
    residual: Callable[[T, T, T, bool], T],
    parallel: Callable[[list[T], T], T],
    identity: Callable[[], T],
) -> T:
    """The graph of a prepared (adapted) model as nested containers built by the given factories.

    Each node becomes ``step(sub_model, node)``, where ``sub_model`` computes the node's output
    from the values it reads at run time (cut with :func:`onnxport.edit.extract`; its weights keep
    their initializer names). A chain becomes ``sequential(steps)``; a block whose two branches
    rejoin at an Add becomes ``residual(body, shortcut, join, body_first)`` (an empty branch is
    ``identity()``); any other rejoining block becomes ``parallel(branches, join)``, the branches
    in the join's operand order.
    """
    structure = block_structure(model)
    static = _static_values(model.graph)
    proto = ir.serde.serialize_model(model)
    del proto.opset_import[:]  # the plan's nodes are in their newest forms (adapted)
    proto.opset_import.extend(onnx.helper.make_opsetid(d, v) for d, v in _opsets(model).items())

    def dynamic(node: ir.Node) -> list[str]:
        out: list[str] = []
        for v in _outer_reads(node):
            if v not in static and v.name not in out:
                if not v.name:
                    raise ModelError(f"node {label(node)} reads an unnamed value; steps are cut by value name")
                out.append(v.name)
        return out

    def one(node: ir.Node) -> T:
        used = [o for o in node.outputs if o.uses() or o.is_graph_output()]
        part = extract(proto, dynamic(node), [used[0].name])
        return step(part, node)

    def build(block: Block) -> list[Any]:
        steps: list[Any] = []
        for item in block:
            if isinstance(item, Step):
                steps.append(one(item.node))
                continue
            mods = [sequential(build(b)) if b else identity() for b in item.branches]
            join = one(item.join)
            body = residual_body(item)
            if body is None:
                steps.append(parallel(mods, join))
            else:
                steps.append(residual(mods[body], mods[1 - body], join, body == 0))
        return steps

    return sequential(build(structure))
