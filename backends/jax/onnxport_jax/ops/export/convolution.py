"""conv_general_dilated (Flax Conv, lax.conv*) -> Conv, with a Transpose to NCHW on each side
when the layout is another (Flax: NHWC); the optimizer cancels the pairs between layers. A kernel
that is a weight is stored in ONNX's OIHW layout under its own name (no Transpose node for it).
Input dilation (transposed convolutions) -> ConvTranspose where the padding allows; 8-bit integer
operands into int32 -> ConvInteger."""

from __future__ import annotations

import jax.numpy as jnp
import onnx_ir as ir
from jax import lax

from onnxport import Sample, exporter

from ._samples import randint, randn


def _nhwc(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@exporter("lax.conv_general_dilated", samples=[
    Sample(lambda x, w: lax.conv(x, w, (1, 1), "SAME"), (randn(1, 3, 8, 8), randn(4, 3, 3, 3)), emits=("Conv",)),
    Sample(_nhwc, (randn(2, 8, 8, 3), randn(3, 3, 3, 4)), emits=("Conv", "Transpose"), name="nhwc"),
    Sample(lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2),
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC")),
           (randn(1, 9, 9, 4), randn(3, 3, 4, 6)), emits=("Conv",), name="strided_dilated"),
    Sample(lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2,
                                                 dimension_numbers=("NWC", "WIO", "NWC")),
           (randn(2, 10, 4), randn(3, 2, 6)), emits=("Conv",), name="grouped_1d"),
    Sample(lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
           (randn(1, 5, 5, 3), randn(3, 3, 3, 2)), emits=("ConvTranspose",), name="transpose"),
    Sample(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", preferred_element_type=jnp.int32),
           (randint(-8, 8, 1, 2, 5, 5, dtype="int8"), randint(-8, 8, 3, 2, 3, 3, dtype="int8")), emits=("ConvInteger",),
           name="int8"),
])
def conv_general_dilated(g, x, w, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                         feature_group_count=1, batch_group_count=1, **_):
    if batch_group_count != 1:
        raise g.error("batch_group_count > 1 (a weight-gradient convolution) is not exported")
    lhs_spec, rhs_spec, out_spec = (list(s) for s in dimension_numbers)
    nd = len(lhs_spec) - 2
    lo = [int(p[0]) for p in padding]
    hi = [int(p[1]) for p in padding]
    out_dt = g.out_dtype()
    integer = out_dt not in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16, ir.DataType.BFLOAT16)
    bytes8 = (ir.DataType.INT8, ir.DataType.UINT8)
    if integer and not (x.dtype in bytes8 and w.dtype in bytes8 and out_dt == ir.DataType.INT32):
        raise g.error(f"an integer convolution of {x.dtype} by {w.dtype} into {out_dt} is not exported "
                      "(ONNX has ConvInteger for 8-bit operands into int32 only)")
    xt = g.op("Transpose", x, perm=lhs_spec) if lhs_spec != list(range(nd + 2)) else x
    strides = [int(s) for s in window_strides]
    dil = [int(d) for d in rhs_dilation]
    if any(d != 1 for d in lhs_dilation):
        y = _transposed(g, xt, w, rhs_spec, strides, lo, hi, [int(d) for d in lhs_dilation], dil,
                        feature_group_count)
    else:
        wt = g.weight_layout(w, rhs_spec)
        if min(lo + hi) < 0:
            raise g.error(f"negative convolution padding {padding} is not exported")
        y = g.op("ConvInteger" if integer else "Conv", xt, wt, strides=strides, pads=lo + hi, dilations=dil,
                 group=int(feature_group_count))
    # ONNX gives [N, C, spatial...]; JAX's out_spec says where each of those sits
    inv = [0] * (nd + 2)
    for onnx_dim, jax_dim in enumerate(out_spec):
        inv[jax_dim] = onnx_dim
    return g.op("Transpose", y, perm=inv) if inv != list(range(nd + 2)) else y


def _transposed(g, xt, w, rhs_spec, strides, lo, hi, lhs_dil, rhs_dil, groups):
    """A fractionally strided convolution (``lhs_dilation``, window strides 1) as ConvTranspose.

    conv(dilate(x, s), flip(w), pad lo/hi) == ConvTranspose(x, w', strides=s, pads=(k-1-lo, k-1-hi)),
    w' the kernel with in/out swapped and its window flipped."""
    if any(s != 1 for s in strides) or groups != 1:
        raise g.error("a convolution with both input dilation and window strides or groups is not exported")
    nd = len(rhs_spec) - 2
    # ConvTranspose weights are [C_in, C_out, k...]: JAX rhs [O, I, k...] with O/I swapped, window flipped
    perm = [rhs_spec[1], rhs_spec[0]] + rhs_spec[2:]
    wt = g.weight_layout(w, perm, flip=list(range(2, nd + 2)))
    k = [(g.dim_or_none(w.shape[rhs_spec[2 + i]]) - 1) * rhs_dil[i] + 1 for i in range(nd)]
    pads_lo = [k[i] - 1 - lo[i] for i in range(nd)]
    pads_hi = [k[i] - 1 - hi[i] for i in range(nd)]
    extra = [max(0, -p) for p in pads_hi]  # more padding at the end than the kernel: output_padding
    pads_hi = [max(0, p) for p in pads_hi]
    if min(pads_lo) < 0 or any(e >= s for e, s in zip(extra, lhs_dil)):
        raise g.error(f"transposed convolution padding {lo}/{hi} beyond the kernel is not exported")
    return g.op("ConvTranspose", xt, wt, strides=lhs_dil, pads=pads_lo + pads_hi, dilations=rhs_dil,
                output_padding=extra if any(extra) else None)


_ = jnp
