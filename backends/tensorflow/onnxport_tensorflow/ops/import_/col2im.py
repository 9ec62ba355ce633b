"""Col2Im: sum sliding-block columns back into an N-D image (the inverse of im2col)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import ints, tensor


@importer("Col2Im", since=18)
def col2im(ctx, x, image_shape, block_shape, *, dilations, pads, strides):
    image = ints(ctx, 1, image_shape)
    block = ints(ctx, 2, block_shape)
    nd = len(image)
    dilations = list(dilations or [1] * nd)
    strides = list(strides or [1] * nd)
    pads = list(pads or [0] * (2 * nd))
    x = tensor(x)
    ck, length = int(x.shape[1]), int(x.shape[2])
    kprod = int(np.prod(block))
    c = ck // kprod
    nblocks = [(image[i] + pads[i] + pads[nd + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
               for i in range(nd)]
    if int(np.prod(nblocks)) != length:
        raise ctx.error(f"input has {length} blocks, the image/block settings give {nblocks}")
    taps = np.meshgrid(*[np.arange(k) for k in block], indexing="ij")
    locs = np.meshgrid(*[np.arange(b) for b in nblocks], indexing="ij")
    coords = [taps[i].reshape(-1, 1) * dilations[i] + locs[i].reshape(1, -1) * strides[i] - pads[i]
              for i in range(nd)]  # each [K, L]
    valid = np.all([(cd >= 0) & (cd < image[i]) for i, cd in enumerate(coords)], axis=0)
    flat = np.ravel_multi_index([np.where(valid, cd, 0) for cd in coords], image)
    size = int(np.prod(image))
    flat = np.where(valid, flat, size)  # invalid taps go to a dropped slot
    n = tf.shape(x)[0]
    cols = tf.transpose(tf.reshape(x, tf.stack([n, c, kprod * length])), [2, 0, 1])
    out = tf.math.unsorted_segment_sum(cols, flat.reshape(-1), size + 1)  # [size + 1, n, c]
    out = tf.transpose(out[:-1], [1, 2, 0])
    return tf.reshape(out, tf.concat([tf.stack([n, c]), image], 0))
