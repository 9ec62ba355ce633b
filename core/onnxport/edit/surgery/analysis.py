"""Size analysis: the rules of :mod:`._rules` run over a model's nodes into its size groups."""

from __future__ import annotations

import os

import onnx
import onnx_ir as ir

from . import _rules
from ._model import copy_model
from .groups import Analysis, SizeGroups


def analyze(model: ir.Model) -> SizeGroups:
    """The size groups of ``model`` (an ``ir.Model`` whose shapes are inferred; not copied)."""
    a = Analysis(model)
    graph = model.graph
    _unshare_vectors(graph)
    for node in graph:
        _rules.visit(a, node)
    for out in graph.outputs:
        for layout in a.tracked(out).values():
            a.fix(layout, f"it reaches graph output {out.name!r}")
    return a.result()


def _unshare_vectors(graph: ir.Graph) -> None:
    """Give every reader of a shared 0/1-D initializer its own copy.

    Exporters merge equal constants (zero biases of unrelated layers); tying their layers' sizes
    for that would be wrong. Shared weights of two or more dimensions stay shared (tied weights).
    """
    for name, v in list(graph.initializers.items()):
        arr = v.const_value
        if arr is None or len(arr.shape) > 1 or v.is_graph_output() or v.is_graph_input():
            continue
        uses = list(v.uses())
        if len({id(u) for u, _ in uses}) < 2:
            continue
        data = arr.numpy()
        for k, (user, index) in enumerate(uses[1:], start=1):
            fresh_name, n = f"{name}__{k}", k
            while fresh_name in graph.initializers:
                n += 1
                fresh_name = f"{name}__{n}"
            fresh = ir.Value(name=fresh_name, shape=ir.Shape(data.shape), type=v.type,
                             const_value=ir.tensor(data.copy(), name=fresh_name))
            graph.register_initializer(fresh)
            user.replace_input_with(index, fresh)


def size_groups(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> SizeGroups:
    """For every channel dimension of ``model``, the tensors whose sizes must stay equal.

    ``print(size_groups(m))`` lists each group: its size, the layers producing it, the layers
    reading it, its parameters, and why it is fixed when it cannot be resized (it reaches a graph
    output, a Reshape with a run-time shape, a Gather on channels ...). The model is not changed.
    """
    return analyze(copy_model(model))
