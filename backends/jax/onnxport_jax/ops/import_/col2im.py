"""Col2Im: sum sliding-block columns back into an N-D image (the inverse of im2col)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import ints


@importer("Col2Im", since=18)
def col2im(ctx, x, image_shape, block_shape, *, dilations, pads, strides):
    image = ints(ctx, 1, image_shape)
    block = ints(ctx, 2, block_shape)
    nd = len(image)
    dilations = list(dilations or [1] * nd)
    strides = list(strides or [1] * nd)
    pads = list(pads or [0] * (2 * nd))
    n, ck, length = x.shape
    kprod = int(np.prod(block))
    c = ck // kprod
    nblocks = [(image[i] + pads[i] + pads[nd + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
               for i in range(nd)]
    if int(np.prod(nblocks)) != length:
        raise ctx.error(f"input has {length} blocks, the image/block settings give {nblocks}")
    # image coordinate of every (kernel tap, block position), per spatial dim
    taps = np.meshgrid(*[np.arange(k) for k in block], indexing="ij")
    locs = np.meshgrid(*[np.arange(b) for b in nblocks], indexing="ij")
    coords = [taps[i].reshape(-1, 1) * dilations[i] + locs[i].reshape(1, -1) * strides[i] - pads[i]
              for i in range(nd)]  # each [K, L]
    valid = np.all([(cd >= 0) & (cd < image[i]) for i, cd in enumerate(coords)], axis=0)
    flat = np.ravel_multi_index([np.where(valid, cd, 0) for cd in coords], image)
    flat = np.where(valid, flat, int(np.prod(image)))  # invalid taps go to a dropped slot
    cols = jnp.reshape(x, (n, c, kprod * length))
    out = jnp.zeros((n, c, int(np.prod(image)) + 1), x.dtype)
    out = out.at[:, :, flat.reshape(-1)].add(cols)
    return jnp.reshape(out[:, :, :-1], (n, c, *image))
