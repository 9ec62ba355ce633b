"""RotaryEmbedding (com.microsoft form) for torch: rotate the first ``rotary_embedding_dim``
values of each head by the angles of cos/sin caches at the given positions."""

from __future__ import annotations

import torch

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
    four = x.dim() == 4
    batch, seq = x.shape[0], x.shape[2] if four else x.shape[1]
    xh = x if four else x.reshape(batch, seq, heads, head_size).transpose(1, 2)  # (B, N, S, H)
    if position_ids.dim() < 2:  # one offset
        pos = position_ids.reshape(-1)[:1].long() + torch.arange(seq, device=x.device)
        pos = pos[None, :].expand(batch, seq)
    else:
        pos = position_ids.long()
    y = rotate(xh, pos, cos_cache, sin_cache, rdim, interleaved)
    return y if four else y.transpose(1, 2).reshape(x.shape)


def rotate(xh, pos, cos_cache, sin_cache, rdim, interleaved):
    """Rotate the first ``rdim`` values of each head of ``xh`` (B, N, S, H) by the cache angles at
    positions ``pos`` (B, S): the halves, or adjacent pairs when ``interleaved``."""
    cos = cos_cache[pos][:, None]  # (B, 1, S, rdim/2)
    sin = sin_cache[pos][:, None]
    rot = xh[..., :rdim]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        out = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).reshape(rot.shape)
    else:
        x1, x2 = rot[..., : rdim // 2], rot[..., rdim // 2:]
        out = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    return torch.cat((out, xh[..., rdim:]), dim=-1) if rdim < xh.shape[-1] else out
