"""MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from onnxport import importer

from ._padding import explicit_pads, same_pads


def _pool_pads(ctx, x, kernel, strides, dilations, auto_pad, pads, nd):
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return same_pads(x.shape[2:], kernel, strides, dilations, auto_pad)
    if auto_pad == "VALID":
        return [0] * (2 * nd)
    return explicit_pads(pads, nd)


@importer("MaxPool", since=22)
def max_pool(ctx, x, *, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides):
    nd = len(kernel_shape)
    strides = list(strides or [1] * nd)
    dilations = list(dilations or [1] * nd)
    pads = _pool_pads(ctx, x, kernel_shape, strides, dilations, auto_pad, pads, nd)
    begins, ends = pads[:nd], pads[nd:]
    sym = begins == ends and all(2 * p <= k for p, k in zip(begins, kernel_shape))
    if not sym:
        pre = []
        for b, e in zip(reversed(begins), reversed(ends)):
            pre += [b, e]
        x = F.pad(x, pre, value=float("-inf") if x.is_floating_point() else torch.iinfo(x.dtype).min)
        begins = [0] * nd
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    want_idx = ctx.num_outputs > 1 and ctx.output_used(1)
    out = fn(x, kernel_shape, strides, begins, dilations, ceil_mode=bool(ceil_mode), return_indices=want_idx)
    if not want_idx:
        return out if ctx.num_outputs == 1 else (out, None)
    y, idx = out
    if storage_order:
        raise ctx.error("MaxPool indices with storage_order=1 are not supported")
    return y, idx


@importer("AveragePool", since=22)
def average_pool(ctx, x, *, auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides):
    nd = len(kernel_shape)
    strides = list(strides or [1] * nd)
    dilations = list(dilations or [1] * nd)
    if any(d != 1 for d in dilations):
        raise ctx.error("AveragePool with dilations is not supported by torch")
    pads = _pool_pads(ctx, x, kernel_shape, strides, dilations, auto_pad, pads, nd)
    begins, ends = pads[:nd], pads[nd:]
    fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[nd - 1]
    if begins == ends and all(2 * p <= k for p, k in zip(begins, kernel_shape)):
        return fn(x, kernel_shape, strides, begins, bool(ceil_mode), bool(count_include_pad))
    pre = []
    for b, e in zip(reversed(begins), reversed(ends)):
        pre += [b, e]
    if count_include_pad:
        return fn(F.pad(x, pre), kernel_shape, strides, 0, bool(ceil_mode), True)
    ones = torch.ones_like(x[:1, :1])
    total = fn(F.pad(x, pre), kernel_shape, strides, 0, bool(ceil_mode), True)
    count = fn(F.pad(ones, pre), kernel_shape, strides, 0, bool(ceil_mode), True)
    return total / count


@importer("GlobalAveragePool", since=22)
def global_average_pool(ctx, x):
    return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)


@importer("GlobalMaxPool", since=22)
def global_max_pool(ctx, x):
    return x.amax(dim=tuple(range(2, x.dim())), keepdim=True)
