"""Other attributes that became inputs: Pad, Clip, Slice, Reshape, TopK, Dropout, Tile."""

from __future__ import annotations

import numpy as np

from .._base import adapter, attr, attr_to_input


@adapter("Pad", 2)
def pad_to_11(node, ctx):
    pads = attr(node, "pads")
    value = attr(node, "value", 0.0)
    inputs = [node.inputs[0], ctx.constant(np.asarray(pads, np.int64), f"{node.name}_pads")]
    dtype = node.inputs[0].dtype.numpy() if node.inputs[0].dtype is not None else np.float32
    inputs.append(ctx.constant(np.asarray(value, dtype=dtype), f"{node.name}_value"))
    return ctx.rebuild(node, inputs=inputs, drop=("pads", "value"))


@adapter("Clip", 6)
def clip_to_11(node, ctx):
    dtype = node.inputs[0].dtype.numpy() if node.inputs[0].dtype is not None else np.float32
    lo, hi = attr(node, "min"), attr(node, "max")
    inputs = [node.inputs[0]]
    inputs.append(ctx.constant(np.asarray(lo, dtype), f"{node.name}_min") if lo is not None else None)
    inputs.append(ctx.constant(np.asarray(hi, dtype), f"{node.name}_max") if hi is not None else None)
    return ctx.rebuild(node, inputs=inputs, drop=("min", "max"))


@adapter("Slice", 1)
def slice_to_10(node, ctx):
    starts, ends, axes = attr(node, "starts"), attr(node, "ends"), attr(node, "axes")
    inputs = [node.inputs[0], ctx.constant(np.asarray(starts, np.int64), f"{node.name}_starts"),
              ctx.constant(np.asarray(ends, np.int64), f"{node.name}_ends")]
    if axes is not None:
        inputs.append(ctx.constant(np.asarray(axes, np.int64), f"{node.name}_axes"))
    return ctx.rebuild(node, inputs=inputs, drop=("starts", "ends", "axes"))


@adapter("Reshape", 1)
def reshape_to_5(node, ctx):
    return attr_to_input(node, ctx, "shape", 1)


@adapter("TopK", 1)
def topk_to_10(node, ctx):
    k = attr(node, "k")
    return ctx.rebuild(node, inputs=[node.inputs[0], ctx.constant(np.asarray([k], np.int64), f"{node.name}_k")], drop=("k",))


@adapter("Tile", 1)
def tile_to_6(node, ctx):
    raise ValueError("Tile-1 (tiles/axis inputs) is not supported; re-export at opset >= 6")


@adapter("Dropout", 1, 6)
def dropout_old(node, ctx):
    return ctx.rebuild(node, drop=("is_test", "consumed_inputs"))


@adapter("Dropout", 7)
def dropout_mask_to_bool(node, ctx):
    """Dropout-7's mask has the input's type; from 10 on it is bool: cast it back for readers."""
    if len(node.outputs) < 2 or not (node.outputs[1].uses() or node.outputs[1].is_graph_output()):
        return None
    import onnx_ir as ir

    from onnxport.importing.plan import VERSION_KEY
    from onnxport.plugin.spec import latest_version

    old_mask = node.outputs[1]
    new = ir.Node(node.domain, node.op_type, list(node.inputs), attributes=list(node.attributes.values()),
                  num_outputs=2, name=node.name)
    to = node.inputs[0].dtype if node.inputs[0].dtype is not None else ir.DataType.FLOAT
    cast = ir.node("Cast", [new.outputs[1]], attributes={"to": int(to)}, name=f"{node.name}_mask_cast")
    cast.meta[VERSION_KEY] = latest_version("Cast")
    ctx.replace(node, [new, cast], [new.outputs[0], cast.outputs[0]])
    _ = old_mask
    return new


@adapter("Dropout", 10)
def dropout_to_12(node, ctx):
    ratio = attr(node, "ratio", 0.5)
    dtype = node.inputs[0].dtype.numpy() if node.inputs[0].dtype is not None else np.float32
    r = ctx.constant(np.asarray(ratio, dtype=dtype), f"{node.name}_ratio")
    return ctx.rebuild(node, inputs=[node.inputs[0], r], drop=("ratio",))
