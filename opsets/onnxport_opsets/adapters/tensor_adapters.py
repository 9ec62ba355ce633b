"""Old forms of tensor and control-flow ops: Concat-1, Pad-1, Scan-8 (batched)."""

from __future__ import annotations

import onnx_ir as ir

from onnxport.importing.plan import VERSION_KEY
from onnxport.plugin import spec as _spec

from .._base import adapter, attr


def _new(op_type: str, inputs: list[ir.Value | None], name: str, num_outputs: int = 1,
         **attributes) -> ir.Node:
    """A node already in its newest form (nodes made here are not visited by the adapt loop)."""
    node = ir.node(op_type, inputs=inputs, attributes=attributes, num_outputs=num_outputs, name=name)
    node.meta[VERSION_KEY] = _spec.latest_version(op_type)
    return node


@adapter("Scan", 8)
def scan8_to_loop(node, ctx):
    """Scan-8 runs its body per batch entry: a Loop over the batch around an unbatched Scan."""
    seq_lens = node.inputs[0] if node.inputs else None
    if seq_lens is not None:
        raise ValueError("Scan-8 with a sequence_lens input is not supported; re-export at opset >= 9")
    batched = list(node.inputs[1:])
    if not batched:
        raise ValueError("Scan-8 has no state or scan inputs")
    n_scan = attr(node, "num_scan_inputs")
    directions = attr(node, "directions")
    base = node.name or "scan8"
    trip = _new("Shape", [batched[0]], f"{base}_batch", start=0, end=1)

    it = ir.Value(name=f"{base}_b", type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([]))
    cond_in = ir.Value(name=f"{base}_cond_in", type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    picks = [_new("Gather", [x, it], f"{base}_pick_{i}", axis=0) for i, x in enumerate(batched)]
    scan_attrs = {"body": node.attributes["body"].value, "num_scan_inputs": n_scan}
    if directions is not None:
        scan_attrs["scan_input_directions"] = list(directions)
    inner = _new("Scan", [p.outputs[0] for p in picks], f"{base}_inner", num_outputs=len(node.outputs),
                 **scan_attrs)
    cond_out = _new("Identity", [cond_in], f"{base}_cond_out")
    for i, v in enumerate(inner.outputs):
        v.name = f"{base}_inner_out_{i}"
    cond_out.outputs[0].name = f"{base}_cond_out"
    body = ir.Graph([it, cond_in], [cond_out.outputs[0], *inner.outputs], nodes=[*picks, inner, cond_out],
                    name=f"{base}_per_batch")
    loop = ir.node("Loop", inputs=[trip.outputs[0], None], attributes={"body": body},
                   num_outputs=len(node.outputs), name=node.name)
    trip.outputs[0].name = f"{base}_batch"
    ctx.replace(node, [trip, loop], list(loop.outputs))
    return loop


@adapter("Concat", 1)
def concat_default_axis(node, ctx):
    """Concat-1 concatenates along axis 1 when ``axis`` is missing; later versions require it."""
    if "axis" in node.attributes:
        return None
    return ctx.rebuild(node, attributes={"axis": 1})


@adapter("Pad", 1)
def pad_paddings_to_pads(node, ctx):
    """Pad-1 names its ``pads`` attribute ``paddings``."""
    return ctx.rebuild(node, attributes={"pads": list(attr(node, "paddings"))}, drop=("paddings",))
