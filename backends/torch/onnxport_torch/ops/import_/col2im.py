"""Col2Im: sum sliding blocks back into an N-D image (``F.fold`` generalised to any rank)."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ...context import ints


@importer("Col2Im", since=18)
def col2im(ctx, x: torch.Tensor, image_shape: torch.Tensor, block_shape: torch.Tensor, *,
           dilations: list[int] | None, pads: list[int] | None, strides: list[int] | None) -> torch.Tensor:
    image = ints(ctx, 1, image_shape)
    block = ints(ctx, 2, block_shape)
    d = len(image)
    if len(block) != d:
        raise ctx.error(f"image_shape has {d} dims but block_shape has {len(block)}")
    dil = dilations or [1] * d
    stride = strides or [1] * d
    pad = pads or [0] * (2 * d)
    if x.dim() != 3:
        raise ctx.error(f"input must be 3-D (N, C * prod(block_shape), L), got shape {list(x.shape)}")
    k = math.prod(block)
    n, ck, length = x.shape
    if ck % k:
        raise ctx.error(f"input dim 1 ({ck}) is not divisible by prod(block_shape) = {k}")
    padded = [image[i] + pad[i] + pad[d + i] for i in range(d)]
    blocks = [(padded[i] - dil[i] * (block[i] - 1) - 1) // stride[i] + 1 for i in range(d)]
    if math.prod(blocks) != length or min(blocks) < 1:
        raise ctx.error(f"input has {length} blocks, but the shapes give {blocks} (product {math.prod(blocks)})")
    # flat index into the padded image for every (kernel offset, block position) pair
    flat = torch.zeros([*block, *blocks], dtype=torch.int64)
    for i in range(d):
        shape = [1] * (2 * d)
        shape[i], shape[d + i] = block[i], blocks[i]
        coord = (torch.arange(block[i]).reshape(-1, 1) * dil[i] + torch.arange(blocks[i]).reshape(1, -1) * stride[i])
        flat = flat * padded[i] + coord.reshape(shape)
    src = x.reshape(n, ck // k, k * length)
    out = torch.zeros(n, ck // k, math.prod(padded), dtype=x.dtype).index_add(2, flat.reshape(-1), src)
    out = out.reshape(n, ck // k, *padded)
    crop = tuple(slice(pad[i], pad[i] + image[i]) for i in range(d))
    return out[(slice(None), slice(None), *crop)]
