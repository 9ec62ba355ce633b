"""torch.cond -> If (each branch a subgraph reading the outer values); the
``torch._higher_order_ops.while_loop`` -> Loop (no trip count: the condition graph decides)."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import Sample, exporter

from ...dtypes import to_onnx_dtype
from ...export_graph import TorchGraph


class _Cond(torch.nn.Module):
    """A module whose branches depend on the data."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: self.lin(t).relu(), lambda t: t.cos() * 2, (x,))


@exporter("higher_order.cond", samples=[Sample(_Cond(), (torch.randn(3, 4),), emits=("If",))])
def cond(g, pred, true_fn, false_fn, operands):
    then_graph = g.subgraph_from(true_fn, operands, "then_branch")
    else_graph = g.subgraph_from(false_fn, operands, "else_branch")
    n = len(then_graph.outputs)
    outs = g.op("If", g.cast(pred, ir.DataType.BOOL), then_branch=then_graph, else_branch=else_graph, outputs=n)
    return outs if isinstance(outs, tuple) else (outs,)


class _While(torch.nn.Module):
    """A loop whose trip count depends on the data, reading a weight from outside the body."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4) * 0.3)

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop

        def cond(i, y):
            return (i < 5) & (y.abs().sum() < 8.0)

        def body(i, y):
            return i + 1, y + torch.tanh(y @ self.w)

        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))


def _inline(g, gm: torch.fx.GraphModule, operands: list) -> list:
    """The outputs of FX graph ``gm`` converted into ``g`` itself, its inputs bound to ``operands``."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(operands):
        raise g.error(f"a while_loop graph takes {len(placeholders)} inputs, got {len(operands)}")
    saved = g.fx
    try:
        return g.converter.walk(g, gm.graph, dict(zip(placeholders, operands)), gm)
    finally:
        g.fx = saved


def _formal(body: TorchGraph, name: str, placeholder: torch.fx.Node) -> ir.Value:
    """A body input typed like the traced loop-carried value of ``placeholder``."""
    val = placeholder.meta.get("val")
    if not isinstance(val, torch.Tensor):
        raise body.error(f"while_loop carries {val!r}, not a tensor (ONNX Loop carries tensors)")
    shape = [int(d) if isinstance(d, int) else None for d in val.shape]
    return body.input(body.fresh(name), to_onnx_dtype(val.dtype), shape)


@exporter("higher_order.while_loop", samples=[Sample(_While(), (torch.randn(3, 4),), emits=("Loop",))])
def while_loop(g, cond_fn, body_fn, carried, additional=()):
    """Loop with no trip count: the condition on the initial values is computed before the loop,
    and the body graph computes the next condition on its results."""
    carried, additional = list(carried), list(additional)
    if not all(isinstance(v, ir.Value) for v in carried):
        raise g.error("while_loop carries a value that is not a tensor (ONNX Loop carries tensors)")
    first = _inline(g, cond_fn, carried + additional)
    body = TorchGraph(g.opset, name=g.unique_name("loop_body"), parent=g)
    body.fx = g.fx
    body.input(body.fresh("iteration"), ir.DataType.INT64, [])
    body.input(body.fresh("cond_in"), ir.DataType.BOOL, [])
    placeholders = [n for n in body_fn.graph.nodes if n.op == "placeholder"]
    formals = [_formal(body, body.fresh(f"carried_{i}"), p) for i, p in enumerate(placeholders[: len(carried)])]
    results = _inline(body, body_fn, formals + additional)
    if len(results) != len(carried):
        raise g.error(f"the while_loop body returns {len(results)} values for {len(carried)} carried")
    (again,) = _inline(body, cond_fn, results + additional)
    body.output(body.cast(again, ir.DataType.BOOL))
    for r in results:
        body.output(r)
    outs = g.op("Loop", None, g.cast(first[0], ir.DataType.BOOL), *carried, body=body.graph(), outputs=len(carried))
    return outs if isinstance(outs, tuple) else (outs,)
