"""Upsample -> Resize, and Resize-10's scales-only form."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from .._base import adapter, attr


@adapter("Upsample", 7)
def upsample_7(node, ctx):
    scales = attr(node, "scales")
    s = ctx.constant(np.asarray(scales, np.float32), f"{node.name}_scales")
    return ctx.rebuild(node, inputs=[node.inputs[0], s], drop=("scales",))


@adapter("Upsample", 10)
def upsample_to_resize(node, ctx):
    mode = attr(node, "mode", "nearest")
    # Resize-10's form (X, scales); the driver continues with Resize's own adapters from there
    return ctx.rebuild(node, op_type="Resize", inputs=[node.inputs[0], node.inputs[1]], attributes={"mode": mode})


@adapter("Resize", 10)
def resize_10_to_11(node, ctx):
    mode = attr(node, "mode", "nearest")
    attrs = {"coordinate_transformation_mode": "asymmetric"}
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
    return ctx.rebuild(node, inputs=[node.inputs[0], None, node.inputs[1]], attributes=attrs)


_ = ir
