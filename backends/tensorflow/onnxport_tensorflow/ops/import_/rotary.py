"""RotaryEmbedding (opset 23): rotate the first ``rotary_embedding_dim`` features of each head,
interleaved pairs or two halves; caches indexed by position_ids or given per position."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor


@importer("RotaryEmbedding", since=23)
def rotary_embedding(ctx, x, cos_cache, sin_cache, position_ids=None, *, interleaved, num_heads,
                     rotary_embedding_dim):
    x = tensor(x)
    shape = tf.shape(x)
    r = rank(x)
    if r == 3:  # [B, S, H*D] -> [B, S, H, D]
        if not num_heads:
            raise ctx.error("3-D input needs the num_heads attribute")
        x = tf.reshape(x, tf.stack([shape[0], shape[1], num_heads, -1]))
    else:  # [B, H, S, D] -> [B, S, H, D]
        x = tf.transpose(x, (0, 2, 1, 3))
    head = x.shape[-1]
    rot = rotary_embedding_dim or head
    cos_cache, sin_cache = tf.cast(cos_cache, x.dtype), tf.cast(sin_cache, x.dtype)
    if position_ids is not None:
        cos, sin = tf.gather(cos_cache, position_ids, axis=0), tf.gather(sin_cache, position_ids, axis=0)
    else:
        cos, sin = cos_cache, sin_cache
    cos, sin = cos[:, :, None, : rot // 2], sin[:, :, None, : rot // 2]  # [B, S, 1, rot/2]
    xr, rest = x[..., :rot], x[..., rot:]
    if interleaved:
        a, b = xr[..., 0::2], xr[..., 1::2]
    else:
        a, b = xr[..., : rot // 2], xr[..., rot // 2:]
    ra, rb = a * cos - b * sin, b * cos + a * sin
    if interleaved:
        out = tf.reshape(tf.stack([ra, rb], axis=-1), tf.shape(xr))
    else:
        out = tf.concat([ra, rb], axis=-1)
    y = tf.concat([out, rest], axis=-1)
    if r == 3:
        return tf.reshape(y, shape)
    return tf.transpose(y, (0, 2, 1, 3))
