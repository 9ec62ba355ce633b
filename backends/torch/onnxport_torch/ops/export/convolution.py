"""convolution, conv1d/2d/3d (int or "same"/"valid" padding), conv_transpose1d/2d/3d -> Conv / ConvTranspose."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from onnxport import Sample, exporter

from ._spatial import per_dim


def _ints(g, name, values, nd):
    return per_dim(g, "convolution", name, values, nd)


def _conv(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups, pads=None):
    """Conv / ConvTranspose; ``padding`` is per-dim symmetric, ``pads`` (instead) ONNX begins + ends.

    An unbatched input (rank nd + 1, which conv1d/2d/3d accept) gets a batch dim of 1 around it."""
    nd = g.rank(w) - 2
    stride, dilation = _ints(g, "stride", stride, nd), _ints(g, "dilation", dilation, nd)
    if pads is None:
        pads = _ints(g, "padding", padding, nd) * 2
    attrs = dict(strides=stride, pads=pads, dilations=dilation, group=int(groups))
    if transposed:
        output_padding = _ints(g, "output_padding", output_padding, nd)
        if any(output_padding):
            attrs["output_padding"] = output_padding
    rank = g.rank(x)
    if rank not in (nd + 1, nd + 2):
        raise g.error(f"a rank-{rank} input to a {nd}-d convolution")
    batch = g.const(np.asarray([0], dtype=np.int64))
    if rank == nd + 1:
        x = g.op("Unsqueeze", x, batch)
    y = g.op("ConvTranspose" if transposed else "Conv", x, w, b, **attrs)
    return g.op("Squeeze", y, batch) if rank == nd + 1 else y


@exporter(
    "aten.convolution.default",
    samples=[
        Sample(nn.Conv2d(3, 8, 3, padding=1), (torch.randn(1, 3, 16, 16),), emits=("Conv",), name="conv2d"),
        Sample(nn.Conv2d(4, 8, 3, stride=2, groups=2, dilation=2, bias=False), (torch.randn(2, 4, 15, 15),),
               emits=("Conv",), name="grouped_dilated"),
        Sample(nn.Conv1d(3, 4, 5, padding=2), (torch.randn(2, 3, 20),), emits=("Conv",), name="conv1d"),
        Sample(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (torch.randn(1, 4, 8, 8),),
               emits=("ConvTranspose",), name="transposed"),
    ],
)
def convolution(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """Symmetric ATen padding -> ONNX begin/end pads; bias passes through as input 3."""
    return _conv(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups)


def _string_pads(g, w, padding, stride, dilation):
    """ONNX pads for ``padding="valid"`` / ``"same"``: "same" puts the odd unit of an even total
    padding (even kernel, or dilation) at the end, as torch does."""
    nd = g.rank(w) - 2
    if padding == "valid":
        return [0] * 2 * nd
    if padding != "same":
        raise g.error(f"padding={padding!r} is not supported (only 'same' and 'valid')")
    if any(s != 1 for s in _ints(g, "stride", stride, nd)):
        raise g.error("padding='same' needs stride 1")
    kernel = list(w.shape)[2:]
    if not all(isinstance(k, int) for k in kernel):
        raise g.error(f"padding='same' with a symbolic kernel size {kernel}")
    total = [d * (k - 1) for d, k in zip(_ints(g, "dilation", dilation, nd), kernel)]
    return [t // 2 for t in total] + [t - t // 2 for t in total]


@exporter(
    "aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
    samples=[
        Sample(nn.Conv2d(3, 8, 3, padding=1), (torch.randn(2, 3, 10, 10),), emits=("Conv",), name="conv2d"),
        Sample(nn.Conv1d(4, 6, 3, stride=2, groups=2, dilation=2, bias=False), (torch.randn(2, 4, 15),),
               emits=("Conv",), name="conv1d"),
        Sample(nn.Conv3d(3, 2, (2, 3, 1), stride=(1, 2, 1), padding=(1, 0, 1)), (torch.randn(1, 3, 4, 5, 5),),
               emits=("Conv",), name="conv3d"),
        Sample(lambda x, w: F.conv2d(x, w, stride=2, padding=1), (torch.randn(3, 8, 8), torch.randn(4, 3, 3, 3)),
               emits=("Conv", "Squeeze"), name="unbatched"),
    ],
)
def conv(g, x, w, b=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    return _conv(g, x, w, b, stride, padding, dilation, False, (0,), groups)


@exporter(
    "aten.conv1d.padding", "aten.conv2d.padding", "aten.conv3d.padding",
    samples=[
        Sample(nn.Conv2d(3, 4, 3, padding="same"), (torch.randn(2, 3, 8, 8),), emits=("Conv",), name="same"),
        Sample(nn.Conv3d(3, 2, (2, 3, 4), padding="same", dilation=(1, 2, 1)), (torch.randn(1, 3, 4, 6, 6),),
               emits=("Conv",), name="same_even_kernel"),
        Sample(nn.Conv1d(3, 4, 4, padding="same", dilation=3), (torch.randn(2, 3, 12),), emits=("Conv",), name="same_dilated"),
        Sample(nn.Conv1d(3, 4, 3, stride=2, padding="valid"), (torch.randn(2, 3, 9),), emits=("Conv",), name="valid"),
    ],
)
def conv_padding(g, x, w, b=None, stride=(1,), padding="valid", dilation=(1,), groups=1):
    """String padding as explicit pads computed from the (static) kernel size."""
    pads = _string_pads(g, w, padding, stride, dilation)
    return _conv(g, x, w, b, stride, None, dilation, False, (0,), groups, pads=pads)


@exporter(
    "aten.conv_transpose1d.default", "aten.conv_transpose2d.input", "aten.conv_transpose3d.input",
    samples=[
        Sample(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (torch.randn(2, 4, 5, 5),),
               emits=("ConvTranspose",), name="conv_transpose2d"),
        Sample(nn.ConvTranspose1d(4, 6, 3, stride=3, padding=2, output_padding=1, groups=2, dilation=2),
               (torch.randn(2, 4, 7),), emits=("ConvTranspose",), name="conv_transpose1d"),
        Sample(nn.ConvTranspose3d(3, 2, (2, 3, 3), stride=(1, 2, 2), bias=False), (torch.randn(1, 3, 3, 4, 4),),
               emits=("ConvTranspose",), name="conv_transpose3d"),
    ],
)
def conv_transpose(g, x, w, b=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1, dilation=(1,)):
    return _conv(g, x, w, b, stride, padding, dilation, True, output_padding, groups)
