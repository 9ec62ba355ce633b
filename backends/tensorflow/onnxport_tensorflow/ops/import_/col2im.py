"""Col2Im: sum sliding-block columns back into an N-D image (the inverse of im2col)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.col2im import col2im_targets

from ._static import ints, tensor


@importer("Col2Im", since=18)
def col2im(ctx, x, image_shape, block_shape, *, dilations, pads, strides):
    image = ints(ctx, 1, image_shape)
    block = ints(ctx, 2, block_shape)
    x = tensor(x)
    ck, length = int(x.shape[1]), int(x.shape[2])
    kprod = int(np.prod(block))
    c = ck // kprod
    with ctx.raising():
        flat = col2im_targets(image, block, dilations, strides, pads, length)
    size = int(np.prod(image))
    n = tf.shape(x)[0]
    cols = tf.transpose(tf.reshape(x, tf.stack([n, c, kprod * length])), [2, 0, 1])
    out = tf.math.unsorted_segment_sum(cols, flat.reshape(-1), size + 1)  # [size + 1, n, c]
    out = tf.transpose(out[:-1], [1, 2, 0])
    return tf.reshape(out, tf.concat([tf.stack([n, c]), image], 0))
