"""Graph walking: every graph, subgraph and function body of a model, and how errors name a node."""

from __future__ import annotations

from collections.abc import Iterator

import onnx_ir as ir


# -- traversal ---------------------------------------------------------------------------
def iter_graphs(graph: ir.Graph) -> Iterator[ir.Graph]:
    """The graph and every subgraph inside it, outermost first."""
    yield graph
    for node in graph:
        if not node.attributes:
            continue
        for attr in node.attributes.values():
            if attr.type == ir.AttributeType.GRAPH:
                yield from iter_graphs(attr.value)
            elif attr.type == ir.AttributeType.GRAPHS:
                for g in attr.value:
                    yield from iter_graphs(g)


def iter_model_graphs(model: ir.Model) -> Iterator[ir.Graph]:
    """The main graph, its subgraphs, then the bodies of the model-local functions (and theirs)."""
    yield from iter_graphs(model.graph)
    for function in model.functions.values():
        yield from iter_graphs(function.graph)


def iter_nodes(graph: ir.Graph) -> Iterator[ir.Node]:
    """Every node of a graph and of its subgraphs."""
    for g in iter_graphs(graph):
        yield from g


def node_label(node: ir.Node) -> str:
    """How errors name a node: ``'conv1' (ai.onnx::Conv)``."""
    return f"{node.name or '<unnamed>'!r} ({node.domain or 'ai.onnx'}::{node.op_type})"
