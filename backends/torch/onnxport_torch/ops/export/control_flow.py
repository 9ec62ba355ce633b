"""torch.cond -> If (each branch a subgraph reading the outer values)."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import Sample, exporter


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
