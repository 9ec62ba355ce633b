"""Col2Im: sum sliding-block columns back into an N-D image (the inverse of im2col)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer
from onnxport.opmath.col2im import col2im_targets

from ._static import ints


@importer("Col2Im", since=18)
def col2im(ctx, x, image_shape, block_shape, *, dilations, pads, strides):
    image = ints(ctx, 1, image_shape)
    block = ints(ctx, 2, block_shape)
    n, ck, length = x.shape
    kprod = int(np.prod(block))
    c = ck // kprod
    with ctx.raising():
        flat = col2im_targets(image, block, dilations, strides, pads, length)
    cols = jnp.reshape(x, (n, c, kprod * length))
    out = jnp.zeros((n, c, int(np.prod(image)) + 1), x.dtype)
    out = out.at[:, :, flat.reshape(-1)].add(cols)
    return jnp.reshape(out[:, :, :-1], (n, c, *image))
