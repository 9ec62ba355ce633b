"""Graphs of rejoining blocks as nested ``nn.Sequential``: :class:`Residual` and :class:`Parallel`.

The core's :func:`onnxport.edit.surgery.blocks.block_structure` says which nodes form chains and which
branches rejoin at which node; this module cuts the imported fx graph along it. Steps share the
imported module's Parameter objects, like the flat sequential.
"""

from __future__ import annotations

from typing import Any

import torch.fx as fx
from torch import nn

from onnxport.edit.surgery.blocks import Block, Branches, Step, residual_body
from onnxport.errors import ModelError

from .sequential import OnnxSequential, step_module


class Residual(nn.Module):
    """``join(body(x), shortcut(x))`` (operands in the ONNX node's order); ``shortcut`` may be ``nn.Identity``."""

    def __init__(self, body: nn.Module, shortcut: nn.Module, join: nn.Module, body_first: bool = True) -> None:
        super().__init__()
        self.body, self.shortcut, self.join = body, shortcut, join
        self.body_first = body_first

    def forward(self, x: Any) -> Any:
        a, b = self.body(x), self.shortcut(x)
        return self.join(a, b) if self.body_first else self.join(b, a)


class Parallel(nn.Module):
    """``join(*(branch(x) for branch in branches))``: multi-branch blocks, concatenations."""

    def __init__(self, branches: list[nn.Module], join: nn.Module) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)
        self.join = join

    def forward(self, x: Any) -> Any:
        return self.join(*(b(x) for b in self.branches))


def _groups(graph: fx.Graph) -> dict[str, list[fx.Node]]:
    """The computing fx nodes of each ONNX node (by name); helpers join their producer."""
    groups: dict[str, list[fx.Node]] = {}
    owner: dict[fx.Node, str] = {}
    for n in graph.nodes:
        if n.op not in ("call_function", "call_module", "call_method"):
            continue
        key = n.meta.get("onnx_node")
        if not key:
            parent = next((a for a in n.all_input_nodes if a in owner), None)
            if parent is None:
                raise ModelError(f"fx node {n.name!r} belongs to no ONNX node; give every node a name")
            key = owner[parent]
        groups.setdefault(key, []).append(n)
        owner[n] = key
    return groups


def nested_sequential(full: nn.Module, structure: Block) -> nn.Sequential:
    """The imported module ``full`` cut along ``structure`` into nested sequential containers."""
    graph = full.graph
    groups = _groups(graph)
    (placeholder,) = [n for n in graph.nodes if n.op == "placeholder"]
    names: list[str] = []

    def members(node) -> tuple[list[fx.Node], fx.Node]:
        if not node.name or node.name not in groups:
            raise ModelError(f"ONNX node {node.name or '<unnamed>'!r} ({node.op_type}) has no imported "
                             "steps of its own; nested sequentials need uniquely named nodes")
        names.append(node.name)
        ms = groups[node.name]
        inside = set(ms)
        leaving = [m for m in ms if any(u not in inside for u in m.users)]
        if len(leaving) != 1:
            raise ModelError(f"node {node.name!r} hands {len(leaving)} values on; a step passes one")
        return ms, leaving[0]

    def outer(ms: list[fx.Node]) -> list[fx.Node]:
        inside = set(ms)
        seen: list[fx.Node] = []
        for m in ms:
            for a in m.all_input_nodes:
                if a not in inside and a.op != "get_attr" and a not in seen:
                    seen.append(a)
        return seen

    def build(block: Block, x: fx.Node) -> tuple[list[nn.Module], fx.Node]:
        steps: list[nn.Module] = []
        for item in block:
            if isinstance(item, Step):
                ms, result = members(item.node)
                if outer(ms) != [x]:
                    raise ModelError(f"node {item.node.name!r} reads values besides its chain value")
                steps.append(step_module(full, ms, x, result))
                x = result
                continue
            module, x = _block(item, x)
            steps.append(module)
        return steps, x

    def _block(item: Branches, x: fx.Node) -> tuple[nn.Module, fx.Node]:
        mods, ends = [], []
        for branch in item.branches:
            sub, end = build(branch, x)
            mods.append(nn.Sequential(*sub) if sub else nn.Identity())
            ends.append(end)
        ms, result = members(item.join)
        if sorted(outer(ms), key=lambda n: n.name) != sorted(set(ends), key=lambda n: n.name):
            raise ModelError(f"node {item.join.name!r} reads values besides its branches' results")
        join = _join(full, ms, ends, result, item.join.op_type)
        body = residual_body(item)
        if body is not None:
            return Residual(mods[body], mods[1 - body], join, body_first=body == 0), result
        return Parallel(mods, join), result

    steps, end = build(structure, placeholder)
    (output,) = [n for n in graph.nodes if n.op == "output"]
    if output.args[0] is not end:
        raise ModelError("the graph's output is not the end of the block chain")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ModelError(f"ONNX node names {dup} are not unique; nested sequentials need unique names")
    seq = OnnxSequential(full._onnx_mode, *steps)
    seq.train(full.training)
    return seq


def _join(full: nn.Module, ms: list[fx.Node], inputs: list[fx.Node], result: fx.Node, op: str) -> nn.Module:
    """The joining node's fx nodes as a module taking the branch results in order."""
    g = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for i, a in enumerate(inputs):
        if a not in env:
            env[a] = g.placeholder(f"x{i}")
        else:  # the same value twice: still one placeholder per operand
            g.placeholder(f"x{i}")

    def arg(a: fx.Node) -> fx.Node:
        if a not in env:
            if a.op != "get_attr":
                raise ModelError(f"value {a.name!r} is not available to the join")
            env[a] = g.get_attr(str(a.target))
        return env[a]

    for m in ms:
        new = g.node_copy(m, arg)
        new.meta.update(m.meta)
        env[m] = new
    g.output(env[result])
    return fx.GraphModule(full, g, class_name=op)


__all__ = ["Parallel", "Residual", "nested_sequential"]
