"""RotaryEmbedding (com.microsoft form) for TensorFlow: rotate the first
``rotary_embedding_dim`` values of each head by the angles of cos/sin caches at the given
positions."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import rotary as C
from ..cases.rotary import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import rotary_heads


@importer("RotaryEmbedding", since=1, domain=DOMAIN, cases=C.rotary_cases())
def rotary_embedding(ctx, x, position_ids, cos_cache, sin_cache, *, interleaved=0, is_packed_batching=0,
                     num_heads=0, rotary_embedding_dim=0, scale=1.0):
    """Input (B, S, N*H) or (B, N, S, H); position_ids (B, S), or one offset (the positions are
    offset + 0..S-1). ``interleaved``: rotate pairs (x[2i], x[2i+1]) instead of the two halves.
    ``scale`` is accepted and, as in onnxruntime's kernels, not applied. Batch and sequence may be
    unknown until run time; the hidden size and the caches' width must be static."""
    if is_packed_batching:
        raise ctx.error("RotaryEmbedding with is_packed_batching=1 (ragged batches) is not supported")
    x = tf.convert_to_tensor(x)
    position_ids = tf.convert_to_tensor(position_ids)
    cos_cache, sin_cache = tf.convert_to_tensor(cos_cache), tf.convert_to_tensor(sin_cache)
    with ctx.raising():
        heads, head_size, rdim = rotary_heads(tuple(x.shape), tuple(cos_cache.shape), num_heads,
                                              rotary_embedding_dim)
    four = len(x.shape) == 4
    dims = tf.shape(x)
    batch, seq = dims[0], dims[2] if four else dims[1]
    xh = x if four else tf.transpose(tf.reshape(x, tf.stack([batch, seq, heads, head_size])), [0, 2, 1, 3])
    if len(position_ids.shape) < 2:  # one offset
        pos = tf.reshape(position_ids, [-1])[:1] + tf.range(seq, dtype=position_ids.dtype)
        pos = tf.broadcast_to(pos[None, :], tf.stack([batch, seq]))
    else:
        pos = position_ids
    y = rotate(xh, pos, cos_cache, sin_cache, rdim, interleaved)
    return y if four else tf.reshape(tf.transpose(y, [0, 2, 1, 3]), dims)


def rotate(xh, pos, cos_cache, sin_cache, rdim, interleaved):
    """Rotate the first ``rdim`` values of each head of ``xh`` (B, N, S, H) by the cache angles at
    positions ``pos`` (B, S): the halves, or adjacent pairs when ``interleaved``."""
    cos = tf.gather(cos_cache, pos)[:, None]  # (B, 1, S, rdim/2)
    sin = tf.gather(sin_cache, pos)[:, None]
    rot = xh[..., :rdim]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        out = tf.reshape(tf.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), axis=-1), tf.shape(rot))
    else:
        x1, x2 = rot[..., : rdim // 2], rot[..., rdim // 2:]
        out = tf.concat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), axis=-1)
    return tf.concat((out, xh[..., rdim:]), axis=-1) if rdim < xh.shape[-1] else out
