"""ConvTranspose: ``nn.ConvTranspose1d/2d/3d`` when the weight is an initializer and the padding
is one torch expresses; otherwise ``F.conv_transpose*d`` on a full output, then cropped/padded."""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn

from onnxport import importer
from onnxport.opmath.pads import split_total

from ._modules import bind


def _pads(in_sizes, w_shape, auto_pad, dilations, kernel_shape, output_padding, output_shape, pads, strides):
    """(kernel, strides, dilations, output_padding, begin pads, end pads) per the ONNX rules."""
    nd = len(w_shape) - 2
    kernel = [int(k) for k in (kernel_shape or w_shape[2:])]
    strides = [int(s) for s in (strides or [1] * nd)]
    dilations = [int(d) for d in (dilations or [1] * nd)]
    out_pad = [int(p) for p in (output_padding or [0] * nd)]
    full = [s * (int(n) - 1) + op + (k - 1) * d + 1
            for n, s, op, k, d in zip(in_sizes, strides, out_pad, kernel, dilations)]
    if output_shape:
        wanted = [int(v) for v in output_shape][-nd:]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        wanted = [int(n) * s for n, s in zip(in_sizes, strides)]
    else:
        wanted = None
    if wanted is not None:
        split = [split_total(f - w, auto_pad) for f, w in zip(full, wanted)]
        begins, ends = [b for b, _ in split], [e for _, e in split]
    elif auto_pad == "VALID":
        begins, ends = [0] * nd, [0] * nd
    else:
        p = [int(v) for v in (pads or [0] * (2 * nd))]
        begins, ends = p[:nd], p[nd:]
    return kernel, strides, dilations, out_pad, begins, ends


@importer("ConvTranspose", since=22)
def conv_transpose(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, output_padding,
                   output_shape, pads, strides):
    nd = w.dim() - 2
    if nd not in (1, 2, 3):
        raise ctx.error(f"{nd}-D ConvTranspose is not supported by torch")
    kernel, strides, dilations, out_pad, begins, ends = _pads(
        x.shape[2:], w.shape, auto_pad, dilations, kernel_shape, output_padding, output_shape, pads, strides)
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    torch_ok = begins == ends and all(op < max(s, d) for op, s, d in zip(out_pad, strides, dilations))
    if torch_ok:
        return fn(x, w, b, strides, begins, out_pad, group, dilations)
    y = fn(x, w, None, strides, 0, 0, group, dilations)
    # output_padding appends zeros at the end; then ONNX pads crop (negative pads grow)
    spec = []
    for i in reversed(range(nd)):
        spec += [-begins[i], out_pad[i] - ends[i]]
    y = F.pad(y, spec)
    if b is not None:
        y = y + b.reshape(1, -1, *([1] * nd))
    return y


@conv_transpose.module_builder
def conv_transpose_module(ctx, *, auto_pad, dilations, group, kernel_shape, output_padding, output_shape,
                          pads, strides):
    if output_shape or auto_pad not in ("NOTSET", "VALID", "") or not ctx.is_initializer(1):
        return None
    has_bias = ctx.num_inputs > 2 and bool(ctx.weight_name(2))
    if has_bias and not ctx.is_initializer(2):
        return None
    w = ctx.param(1)
    nd = w.dim() - 2
    if nd not in (1, 2, 3):
        return None
    kernel, strides, dilations, out_pad, begins, ends = _pads(
        [1] * nd, w.shape, auto_pad, dilations, kernel_shape, output_padding, output_shape, pads, strides)
    if kernel != list(w.shape[2:]) or begins != ends:
        return None
    if any(op >= max(s, d) for op, s, d in zip(out_pad, strides, dilations)):
        return None
    cls = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)[nd - 1]
    m = cls(w.shape[0], w.shape[1] * group, kernel, strides, begins, out_pad, group, bias=has_bias,
            dilation=dilations, device="meta")
    bind(m, "weight", w)
    bind(m, "bias", ctx.param(2) if has_bias else None)
    return m, [0]
