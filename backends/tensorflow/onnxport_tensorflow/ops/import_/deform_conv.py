"""DeformConv (2-D): bilinear samples at offset kernel taps, then a grouped contraction.

Every offset group's channels are sampled with one gather per bilinear corner over the images'
pixel rows, so the batch may be symbolic; the image and output sizes must be static.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._padding import spatial_settings


def _bilinear(img, py, px, h: int, w: int):
    """Sample ``img`` [N, G, C, H*W] at float positions ``py``/``px`` [N, G, P] with zeros outside
    the image: [N, G, C, P]."""
    cpg = img.shape[2]
    groups = tf.shape(img)[0] * tf.shape(img)[1]
    flat = tf.reshape(tf.transpose(img, [0, 1, 3, 2]), [-1, cpg])  # [N*G*H*W, C]: one row per pixel
    start = tf.reshape(tf.range(groups) * (h * w), [-1, img.shape[1], 1])  # each (n, g) image's first row
    y0, x0 = tf.floor(py), tf.floor(px)
    out = 0
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            wt = (1 - tf.abs(py - yy)) * (1 - tf.abs(px - xx))
            valid = (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
            yi = tf.cast(tf.clip_by_value(yy, 0, h - 1), tf.int32)
            xi = tf.cast(tf.clip_by_value(xx, 0, w - 1), tf.int32)
            vals = tf.gather(flat, start + yi * w + xi)  # [N, G, P, C]
            out = out + vals * tf.cast(tf.where(valid, wt, 0.0), img.dtype)[..., None]
    return tf.transpose(out, [0, 1, 3, 2])


@importer("DeformConv", since=22)
def deform_conv(ctx, x, w, offset, b=None, mask=None, *, dilations, group, kernel_shape, offset_group,
                pads, strides):
    """2-D deformable convolution: bilinear samples at offset kernel taps, then a grouped matmul."""
    x = tf.convert_to_tensor(x)
    w = tf.convert_to_tensor(w, x.dtype)
    offset = tf.convert_to_tensor(offset)
    if len(w.shape) != 4:
        raise ctx.error(f"only 2-D DeformConv is supported, got a {len(w.shape) - 2}-D kernel")
    kernel, strides, dilations = spatial_settings(2, kernel_shape or w.shape[2:], strides, dilations)
    pads = [int(p) for p in (pads or [0] * 4)]
    c, h, wd = x.shape[1], x.shape[2], x.shape[3]
    oh, ow = offset.shape[2], offset.shape[3]
    if None in (c, h, wd, oh, ow):
        raise ctx.error(f"DeformConv needs static channel and spatial sizes, got x {x.shape}, offset {offset.shape}")
    kh, kw = kernel
    og = int(offset_group or 1)
    group = int(group or 1)
    k = kh * kw
    oc = int(w.shape[0])
    if c % og or c % group or oc % group:
        raise ctx.error(f"{c} channels and {oc} outputs do not split into group={group}, offset_group={og}")
    wide = tf.float64 if x.dtype == tf.float64 else tf.float32
    # sample positions: the regular grid of every kernel tap, plus the offsets [N, og, k, oh*ow]
    base_y = np.arange(oh) * strides[0] - pads[0]
    base_x = np.arange(ow) * strides[1] - pads[1]
    tap_y = np.repeat(np.arange(kh) * dilations[0], kw)
    tap_x = np.tile(np.arange(kw) * dilations[1], kh)
    grid_y = (tap_y[:, None, None] + base_y[None, :, None] + np.zeros((1, 1, ow))).reshape(k, oh * ow)
    grid_x = (tap_x[:, None, None] + base_x[None, None, :] + np.zeros((1, oh, 1))).reshape(k, oh * ow)
    off = tf.reshape(tf.cast(offset, wide), [-1, og, k, 2, oh * ow])
    py = tf.reshape(grid_y + off[:, :, :, 0], [-1, og, k * oh * ow])
    px = tf.reshape(grid_x + off[:, :, :, 1], [-1, og, k * oh * ow])
    img = tf.reshape(x, [-1, og, c // og, h * wd])
    col = _bilinear(img, py, px, h, wd)  # [N, og, c/og, k*oh*ow]
    col = tf.reshape(col, [-1, og, c // og, k, oh, ow])
    if mask is not None:
        col = col * tf.reshape(tf.cast(mask, x.dtype), [-1, og, 1, k, oh, ow])
    col = tf.reshape(col, [-1, group, c // group, k, oh, ow])
    wg = tf.reshape(w, [group, oc // group, c // group, k])
    y = tf.einsum("ngckhw,gock->ngohw", col, wg)
    y = tf.reshape(y, [-1, oc, oh, ow])
    if b is not None:
        y = y + tf.reshape(tf.cast(b, y.dtype), [1, -1, 1, 1])
    return y
