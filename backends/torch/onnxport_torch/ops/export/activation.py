"""Activations: relu, gelu, sigmoid, tanh, silu, mish, softplus, hardswish, hardsigmoid, leaky_relu,
rrelu, prelu, elu, selu, celu, log_sigmoid, hardtanh, threshold, hardshrink, softshrink, glu;
pixel_shuffle, pixel_unshuffle, channel_shuffle."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch
from torch import nn

from onnxport import Sample, exporter

_X = (torch.randn(2, 3, 8),)
_WIDE = (torch.randn(2, 3, 8) * 4,)

#: torch's SELU constants (ONNX Selu's defaults are their float32 roundings)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

#: the relative precision (machine epsilon) of the float types
_EPS = {ir.DataType.FLOAT16: 2.0**-10, ir.DataType.BFLOAT16: 2.0**-7, ir.DataType.FLOAT: 2.0**-23,
        ir.DataType.DOUBLE: 2.0**-52}


@exporter("aten.relu.default", samples=[Sample(nn.ReLU(), _X, emits=("Relu",))])
def relu(g, x):
    return g.op("Relu", x)


@exporter("aten.sigmoid.default", samples=[Sample(nn.Sigmoid(), _X, emits=("Sigmoid",))])
def sigmoid(g, x):
    return g.op("Sigmoid", x)


@exporter("aten.tanh.default", samples=[Sample(nn.Tanh(), _X, emits=("Tanh",))])
def tanh(g, x):
    return g.op("Tanh", x)


@exporter(
    "aten.gelu.default",
    samples=[Sample(nn.GELU(), _X, emits=("Erf",), name="erf"),  # Gelu itself from opset 20
             Sample(nn.GELU(approximate="tanh"), _X, emits=("Tanh",), name="tanh")],
)
def gelu(g, x, *, approximate="none"):
    """Gelu (opset 20); older opsets get the Erf/Tanh form from the down-adapter."""
    return g.op("Gelu", x, approximate=approximate)


@exporter("aten.silu.default", samples=[Sample(nn.SiLU(), _WIDE, emits=("Sigmoid", "Mul"))])
def silu(g, x):
    """x * sigmoid(x)."""
    return g.op("Mul", x, g.op("Sigmoid", x))


@exporter("aten.mish.default", samples=[Sample(nn.Mish(), _WIDE, emits=("Mish",))])
def mish(g, x):
    """Mish (opset 18); before, x * tanh(softplus(x))."""
    if g.opset >= 18:
        return g.op("Mish", x)
    return g.op("Mul", x, g.op("Tanh", g.op("Softplus", x)))


@exporter(
    "aten.softplus.default",
    samples=[Sample(nn.Softplus(), (torch.randn(2, 3, 8) * 10,), emits=("Softplus",)),
             Sample(nn.Softplus(beta=2.0, threshold=3.0), _WIDE, emits=("Softplus", "Where"), name="beta_threshold"),
             Sample(nn.Softplus(beta=0.5).double(), (torch.randn(2, 3, 8, dtype=torch.float64) * 30,),
                    emits=("Softplus", "Where"), name="float64")],
)
def softplus(g, x, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold. The Where is left out
    when the two agree to the dtype's precision there (float32 at the default threshold 20)."""
    z = x if beta == 1 else g.op("Mul", x, g.scalar(float(beta), x.dtype))
    y = g.op("Softplus", z)
    if beta != 1:
        y = g.op("Div", y, g.scalar(float(beta), x.dtype))
    eps = _EPS.get(x.dtype, 0.0)
    if threshold > 0 and np.log1p(np.exp(-float(threshold))) < float(threshold) * eps / 2:
        return y
    return g.op("Where", g.op("Greater", z, g.scalar(float(threshold), x.dtype)), x, y)


@exporter("aten.hardswish.default", samples=[Sample(nn.Hardswish(), _WIDE, emits=("HardSwish",))])
def hardswish(g, x):
    return g.op("HardSwish", x)


@exporter("aten.hardsigmoid.default", samples=[Sample(nn.Hardsigmoid(), _WIDE, emits=("HardSigmoid",))])
def hardsigmoid(g, x):
    return g.op("HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5)


@exporter("aten.leaky_relu.default", samples=[Sample(nn.LeakyReLU(0.2), _X, emits=("LeakyRelu",))])
def leaky_relu(g, x, negative_slope=0.01):
    return g.op("LeakyRelu", x, alpha=float(negative_slope))


@exporter("aten.rrelu.default", samples=[Sample(nn.RReLU(0.1, 0.3), _X, emits=("LeakyRelu",))])
def rrelu(g, x, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """In evaluation a leaky relu with the mean slope; the random slopes of training are not exported."""
    if training:
        raise g.error("rrelu in training mode (random slopes) is not supported; call .eval() on the module")
    return g.op("LeakyRelu", x, alpha=(float(lower) + float(upper)) / 2)


@exporter(
    "aten.prelu.default",
    samples=[Sample(nn.PReLU(3, 0.3), (torch.randn(2, 3, 4, 5),), emits=("PRelu",), name="channels"),
             Sample(nn.PReLU(), _X, emits=("PRelu",), name="shared"),
             Sample(nn.PReLU(4, 0.1), (torch.randn(3, 4),), emits=("PRelu",), name="rank2")],
)
def prelu(g, x, weight):
    """PRelu; a per-channel weight (C,) is unsqueezed to (C, 1, ...) to broadcast over dim 1."""
    rank = g.rank(x)
    if weight.shape is not None and list(weight.shape) != [1] and rank > 2:
        weight = g.op("Unsqueeze", weight, g.const(np.asarray(list(range(1, rank - 1)), dtype=np.int64)))
    return g.op("PRelu", x, weight)


def _elu(g, x, alpha, scale, input_scale):
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1): Elu, Selu, Celu, or
    Elu of input_scale * x rescaled."""
    alpha, scale, input_scale = float(alpha), float(scale), float(input_scale)
    if input_scale == 1.0:
        if scale == 1.0:
            return g.op("Elu", x, alpha=alpha)
        return g.op("Selu", x, alpha=alpha, gamma=scale)
    if scale == 1.0 and alpha > 0 and abs(alpha * input_scale - 1) < 1e-12 and x.dtype == ir.DataType.FLOAT:
        return g.op("Celu", x, alpha=alpha)  # Celu takes float32 only
    if input_scale <= 0:
        raise g.error(f"elu with input_scale {input_scale} <= 0 is not supported")
    y = g.op("Elu", g.op("Mul", x, g.scalar(input_scale, x.dtype)), alpha=alpha * input_scale)
    return g.op("Mul", y, g.scalar(scale / input_scale, x.dtype))


@exporter(
    "aten.elu.default",
    samples=[Sample(nn.ELU(0.7), _X, emits=("Elu",)),
             Sample(nn.SELU(), _X, emits=("Selu",), name="selu"),
             Sample(lambda x: torch.ops.aten.elu(x, 0.5, 2.0, 3.0), _X, emits=("Elu", "Mul"), name="scaled")],
)
def elu(g, x, alpha=1.0, scale=1.0, input_scale=1.0):
    return _elu(g, x, alpha, scale, input_scale)


@exporter("aten.selu.default", samples=[Sample(nn.SELU(), _WIDE, emits=("Selu",))])
def selu(g, x):
    return g.op("Selu", x, alpha=_SELU_ALPHA, gamma=_SELU_SCALE)


@exporter(
    "aten.celu.default",
    samples=[Sample(nn.CELU(0.5), _WIDE, emits=("Celu",)),
             Sample(nn.CELU(2.0).double(), (torch.randn(2, 3, 4, dtype=torch.float64),), emits=("Elu",), name="float64")],
)
def celu(g, x, alpha=1.0):
    """Celu (float32 only in ONNX); other dtypes alpha * elu(x / alpha)."""
    if float(alpha) == 0:
        raise g.error("celu with alpha 0")
    if x.dtype == ir.DataType.FLOAT:
        return g.op("Celu", x, alpha=float(alpha))
    if float(alpha) < 0:
        raise g.error(f"celu of {x.dtype} with a negative alpha ({alpha}) is not supported")
    return _elu(g, x, alpha, 1.0, 1.0 / float(alpha))


@exporter("aten.log_sigmoid.default", samples=[Sample(nn.LogSigmoid(), (torch.randn(2, 3, 8) * 40,), emits=("Softplus", "Neg"))])
def log_sigmoid(g, x):
    """-softplus(-x): no underflow to log(0) for very negative x."""
    return g.op("Neg", g.op("Softplus", g.op("Neg", x)))


@exporter("aten.hardtanh.default", samples=[Sample(nn.ReLU6(), (torch.randn(2, 3, 8) * 5,), emits=("Clip",))])
def hardtanh(g, x, min_val=-1.0, max_val=1.0):
    dt = x.dtype
    return g.op("Clip", x, g.scalar(min_val, dt), g.scalar(max_val, dt))


@exporter("aten.threshold.default", samples=[Sample(nn.Threshold(0.1, 20.0), _X, emits=("Where",))])
def threshold(g, x, threshold, value):
    """x where x > threshold, else value."""
    return g.op("Where", g.op("Greater", x, g.scalar(threshold, x.dtype)), x, g.scalar(value, x.dtype))


@exporter("aten.hardshrink.default", samples=[Sample(nn.Hardshrink(0.7), _X, emits=("Shrink",))])
def hardshrink(g, x, lambd=0.5):
    return g.op("Shrink", x, lambd=float(lambd), bias=0.0)


@exporter("aten.softshrink.default", samples=[Sample(nn.Softshrink(0.7), _X, emits=("Shrink",))])
def softshrink(g, x, lambd=0.5):
    return g.op("Shrink", x, lambd=float(lambd), bias=float(lambd))


@exporter(
    "aten.glu.default",
    samples=[Sample(nn.GLU(), (torch.randn(2, 3, 8),), emits=("Split", "Sigmoid", "Mul")),
             Sample(nn.GLU(1), (torch.randn(2, 6, 5),), emits=("Split", "Sigmoid", "Mul"), name="dim1"),
             Sample(nn.GLU(-2), (torch.randn(2, 4, 3),), emits=("Split", "Sigmoid", "Mul"), name="dim_neg")],
)
def glu(g, x, dim=-1):
    """First half * sigmoid(second half) along ``dim`` (Slices where its size is symbolic)."""
    axis = g.axis(dim, g.rank(x))
    size = x.shape[axis]
    if isinstance(size, int):
        half = size // 2
        a, b = g.op("Split", x, g.const(np.asarray([half, half], dtype=np.int64)), axis=axis, outputs=2)
    else:
        half = g.op("Div", g.dim_size(x, axis), g.const(np.asarray([2], dtype=np.int64)))
        axes = g.const(np.asarray([axis], dtype=np.int64))
        a = g.op("Slice", x, g.const(np.asarray([0], dtype=np.int64)), half, axes)
        b = g.op("Slice", x, half, g.const(np.asarray([np.iinfo(np.int64).max], dtype=np.int64)), axes)
    return g.op("Mul", a, g.op("Sigmoid", b))


# -- channel rearrangements ------------------------------------------------------------------------
def _as_4d(g, x, fn):
    """``fn`` on ``x`` as (N, C, H, W): leading dims other than one batch dim (or none) are
    flattened into one around it."""
    rank = g.rank(x)
    if rank == 4:
        return fn(x)
    if rank < 3:
        raise g.error(f"a rank-{rank} input (it needs (*, C, H, W))")
    out = list(g.meta().shape)
    if all(isinstance(d, int) for d in list(x.shape) + out):
        y = fn(g.op("Reshape", x, g.const(np.asarray([-1, *list(x.shape)[-3:]], dtype=np.int64))))
        return g.op("Reshape", y, g.const(np.asarray(out, dtype=np.int64)))
    shape = g.op("Shape", x)
    inner = g.op("Concat", g.const(np.asarray([-1], dtype=np.int64)),
                 g.op("Slice", shape, g.const(np.asarray([-3], dtype=np.int64)),
                      g.const(np.asarray([rank], dtype=np.int64))), axis=0)
    y = fn(g.op("Reshape", x, inner))
    lead = g.op("Slice", shape, g.const(np.asarray([0], dtype=np.int64)), g.const(np.asarray([rank - 3], dtype=np.int64)))
    tail = g.op("Slice", g.op("Shape", y), g.const(np.asarray([1], dtype=np.int64)), g.const(np.asarray([4], dtype=np.int64)))
    return g.op("Reshape", y, g.op("Concat", lead, tail, axis=0))


@exporter(
    "aten.pixel_shuffle.default",
    samples=[Sample(nn.PixelShuffle(2), (torch.randn(2, 8, 3, 3),), emits=("DepthToSpace",)),
             Sample(nn.PixelShuffle(2), (torch.randn(2, 2, 4, 3, 2),), emits=("DepthToSpace",), name="rank5")],
)
def pixel_shuffle(g, x, upscale_factor):
    """DepthToSpace in CRD order (torch's channel order)."""
    return _as_4d(g, x, lambda v: g.op("DepthToSpace", v, blocksize=int(upscale_factor), mode="CRD"))


def _channels(g, x):
    c = x.shape[-3] if g.rank(x) >= 3 else None
    if not isinstance(c, int):
        raise g.error(f"the channel count ({c}) must be static")
    return c


@exporter(
    "aten.pixel_unshuffle.default",
    samples=[Sample(nn.PixelUnshuffle(2), (torch.randn(2, 3, 4, 6),), emits=("SpaceToDepth", "Gather")),
             Sample(nn.PixelUnshuffle(3), (torch.randn(1, 6, 3),), emits=("SpaceToDepth",), name="unbatched")],
)
def pixel_unshuffle(g, x, downscale_factor):
    """SpaceToDepth, whose channels run (block row, block column, channel), then a Gather into
    torch's (channel, block row, block column) order."""
    r, c = int(downscale_factor), _channels(g, x)
    if r == 1:
        return x
    perm = np.arange(c * r * r).reshape(r * r, c).T.reshape(-1)

    def fn(v):
        y = g.op("SpaceToDepth", v, blocksize=r)
        return y if c == 1 else g.op("Gather", y, g.const(perm.astype(np.int64)), axis=1)

    return _as_4d(g, x, fn)


@exporter(
    "aten.channel_shuffle.default", "aten.native_channel_shuffle.default",
    samples=[Sample(nn.ChannelShuffle(3), (torch.randn(2, 6, 2, 3),), emits=("Gather",)),
             Sample(nn.ChannelShuffle(2), (torch.randn(2, 4, 5),), emits=("Gather",), name="rank3")],
)
def channel_shuffle(g, x, groups):
    """A Gather of the channels (dim 1) in the shuffled order."""
    c = x.shape[1] if g.rank(x) >= 2 else None
    if not isinstance(c, int):
        raise g.error(f"the channel count ({c}) must be static")
    perm = np.arange(c).reshape(int(groups), c // int(groups)).T.reshape(-1)
    return g.op("Gather", x, g.const(perm.astype(np.int64)), axis=1)
