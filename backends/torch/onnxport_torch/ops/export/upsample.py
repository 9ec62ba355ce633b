"""upsample_nearest2d / upsample_bilinear2d -> Resize."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from onnxport import Sample, exporter

_X = torch.randn(1, 2, 5, 6)


def _resize(g, x, output_size, scale_factors, **attrs):
    if scale_factors is not None:
        scales = g.const(np.asarray([1.0, 1.0, *scale_factors], dtype=np.float32))
        return g.op("Resize", x, None, scales, **attrs)
    lead = g.op("Slice", g.op("Shape", x), g.ints([0]), g.ints([2]))
    sizes = g.op("Concat", lead, g.ints(list(output_size)), axis=0)
    return g.op("Resize", x, None, None, sizes, **attrs)


@exporter(
    "aten.upsample_nearest2d.vec",
    samples=[Sample(nn.Upsample(scale_factor=2, mode="nearest"), (_X,), emits=("Resize",), name="scale"),
             Sample(nn.Upsample(size=(7, 9), mode="nearest"), (_X,), emits=("Resize",), name="size")],
)
def upsample_nearest2d(g, x, output_size, scale_factors=None, scales_h=None, scales_w=None):
    if scale_factors is None and scales_h is not None:
        scale_factors = [scales_h, scales_w]
    return _resize(g, x, output_size, scale_factors, mode="nearest",
                   coordinate_transformation_mode="asymmetric", nearest_mode="floor")


@exporter(
    "aten.upsample_bilinear2d.vec",
    samples=[Sample(nn.Upsample(scale_factor=2, mode="bilinear"), (_X,), emits=("Resize",), name="scale"),
             Sample(nn.Upsample(size=(7, 9), mode="bilinear", align_corners=True), (_X,), emits=("Resize",), name="align")],
)
def upsample_bilinear2d(g, x, output_size, align_corners, scale_factors=None, scales_h=None, scales_w=None):
    if scale_factors is None and scales_h is not None:
        scale_factors = [scales_h, scales_w]
    mode = "align_corners" if align_corners else "pytorch_half_pixel"
    return _resize(g, x, output_size, scale_factors, mode="linear", coordinate_transformation_mode=mode)
