"""RotaryEmbedding (com.microsoft form) for JAX: rotate the first ``rotary_embedding_dim``
values of each head by the angles of cos/sin caches at the given positions."""

from __future__ import annotations

import jax.numpy as jnp

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
    ``scale`` is accepted and, as in onnxruntime's kernels, not applied."""
    if is_packed_batching:
        raise ctx.error("RotaryEmbedding with is_packed_batching=1 (ragged batches) is not supported")
    with ctx.raising():
        heads, head_size, rdim = rotary_heads(tuple(x.shape), tuple(cos_cache.shape), num_heads,
                                              rotary_embedding_dim)
    four = x.ndim == 4
    batch, seq = x.shape[0], x.shape[2] if four else x.shape[1]
    xh = x if four else jnp.swapaxes(jnp.reshape(x, (batch, seq, heads, head_size)), 1, 2)
    if position_ids.ndim < 2:  # one offset
        pos = jnp.reshape(position_ids, (-1,))[:1] + jnp.arange(seq, dtype=position_ids.dtype)
        pos = jnp.broadcast_to(pos[None, :], (batch, seq))
    else:
        pos = position_ids
    y = rotate(xh, pos, cos_cache, sin_cache, rdim, interleaved)
    return y if four else jnp.reshape(jnp.swapaxes(y, 1, 2), x.shape)


def rotate(xh, pos, cos_cache, sin_cache, rdim, interleaved):
    """Rotate the first ``rdim`` values of each head of ``xh`` (B, N, S, H) by the cache angles at
    positions ``pos`` (B, S): the halves, or adjacent pairs when ``interleaved``."""
    cos = jnp.take(cos_cache, pos, axis=0)[:, None]  # (B, 1, S, rdim/2)
    sin = jnp.take(sin_cache, pos, axis=0)[:, None]
    rot = xh[..., :rdim]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        out = jnp.reshape(jnp.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), axis=-1), rot.shape)
    else:
        x1, x2 = rot[..., : rdim // 2], rot[..., rdim // 2:]
        out = jnp.concatenate((x1 * cos - x2 * sin, x2 * cos + x1 * sin), axis=-1)
    return jnp.concatenate((out, xh[..., rdim:]), axis=-1) if rdim < xh.shape[-1] else out
