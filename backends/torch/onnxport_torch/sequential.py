"""An ONNX graph as ``nn.Sequential``: one step per node, native layers unwrapped.

A linear graph is a flat sequential. A graph of blocks whose branches rejoin (ResNet, DenseNet,
MobileNetV2 ...) nests: each such block is a :class:`Residual` (a body and a shortcut) or a
:class:`Parallel` (several branches), holding the branches and the joining node's step.

The model is imported once; its fx graph is then cut into one small ``fx.GraphModule`` per ONNX
node. Steps share the imported module's Parameter objects, so a weight used by two nodes stays one
Parameter. A step that is just a native layer applied to the chain value (``nn.Conv2d``,
``nn.Linear`` ...) is that layer itself.
"""

from __future__ import annotations

from typing import Any

import torch.fx as fx
from torch import nn

from onnxport.errors import ModelError


def flat_sequential(full: nn.Module) -> nn.Sequential:
    """The imported module ``full`` of a linear graph as a flat ``nn.Sequential`` (one step per node)."""
    graph = full.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if len(placeholders) != 1:
        raise ModelError(f"a sequential model has one input; the imported graph has {len(placeholders)}")
    (output,) = [n for n in graph.nodes if n.op == "output"]

    # group the computing fx nodes by the ONNX node they came from, in graph order
    groups: list[list[fx.Node]] = []
    owner: dict[fx.Node, int] = {}
    for n in graph.nodes:
        if n.op not in ("call_function", "call_module", "call_method"):
            continue
        key = n.meta.get("onnx_node")
        parent = next((a for a in n.all_input_nodes if a in owner), None)
        if key is None and parent is not None:
            # helpers without an ONNX node of their own (output getitem) join their producer
            groups[owner[parent]].append(n)
            owner[n] = owner[parent]
            continue
        if groups and groups[-1][0].meta.get("onnx_node") == key and key is not None:
            groups[-1].append(n)
            owner[n] = len(groups) - 1
            continue
        groups.append([n])
        owner[n] = len(groups) - 1

    steps: list[nn.Module] = []
    chain: fx.Node = placeholders[0]
    for members in groups:
        inside = set(members)
        label = members[0].meta.get("onnx_node") or members[0].name
        outer = {a for m in members for a in m.all_input_nodes if a not in inside and a.op != "get_attr"}
        if outer - {chain}:
            names = sorted(a.name for a in outer - {chain})
            raise ModelError(f"node {label!r} reads {names} besides the chain value: the graph is not linear")
        if chain not in outer:
            raise ModelError(f"node {label!r} does not read the chain value {chain.name!r}: the graph is not linear")
        leaving = [m for m in members if any(u not in inside for u in m.users)]
        if len(leaving) != 1:
            raise ModelError(f"node {label!r} hands {len(leaving)} values on: the graph is not linear")
        steps.append(step_module(full, members, chain, leaving[0]))
        chain = leaving[0]
    if output.args[0] is not chain:
        raise ModelError("the graph's output is not the end of the chain: the graph is not linear")
    seq = OnnxSequential(full._onnx_mode, *steps)
    seq.train(full.training)
    return seq


class OnnxSequential(nn.Sequential):
    """``nn.Sequential`` whose ``train()``/``eval()`` also switch the steps' ONNX-level ops
    (BatchNormalization, Dropout run as functions read the imported model's mode flag)."""

    def __init__(self, mode: Any, *steps: nn.Module) -> None:
        super().__init__(*steps)
        self._onnx_mode = mode

    def train(self, mode: bool = True) -> OnnxSequential:
        super().train(mode)
        self._onnx_mode.training = mode
        return self


def step_module(full: nn.Module, members: list[fx.Node], chain: fx.Node, result: fx.Node) -> nn.Module:
    """One ONNX node's fx nodes as a module of its own (or the native layer it calls)."""
    if len(members) == 1 and members[0].op == "call_module" and members[0].args == (chain,) and not members[0].kwargs:
        return full.get_submodule(str(members[0].target))
    g = fx.Graph()
    env: dict[fx.Node, fx.Node] = {chain: g.placeholder("x")}

    def arg(a: fx.Node) -> fx.Node:
        if a not in env:
            if a.op != "get_attr":
                raise ModelError(f"value {a.name!r} is not available to this step")
            env[a] = g.get_attr(str(a.target))
        return env[a]

    for m in members:
        new = g.node_copy(m, arg)
        new.meta.update(m.meta)
        env[m] = new
    g.output(env[result])
    name = str(members[0].meta.get("onnx_op", ("", "Step"))[1])
    return fx.GraphModule(full, g, class_name=name)


__all__ = ["OnnxSequential", "flat_sequential", "step_module"]
