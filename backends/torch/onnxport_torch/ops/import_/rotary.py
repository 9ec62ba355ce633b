"""RotaryEmbedding: rotate (half-split or interleaved) pairs of each head by cached cos/sin."""

from __future__ import annotations

import torch

from onnxport import importer


@importer("RotaryEmbedding", since=23)
def rotary_embedding(ctx, x, cos_cache, sin_cache, position_ids=None, *, interleaved, num_heads,
                     rotary_embedding_dim):
    shape = x.shape
    if x.dim() == 4:  # [B, H, S, D] -> [B, S, H, D]
        t = x.transpose(1, 2)
    else:
        if not num_heads:
            raise ctx.error("3-D RotaryEmbedding input needs num_heads")
        t = x.reshape(shape[0], shape[1], int(num_heads), shape[2] // int(num_heads))
    dim = int(rotary_embedding_dim) or t.shape[-1]
    rot, rest = t[..., :dim], t[..., dim:]
    if position_ids is not None:
        cos_cache = cos_cache[position_ids.to(torch.int64)]
        sin_cache = sin_cache[position_ids.to(torch.int64)]
    if cos_cache.shape[-1] != dim // 2 or sin_cache.shape[-1] != dim // 2:
        raise ctx.error(f"cos/sin caches have {cos_cache.shape[-1]} columns, rotary dim/2 is {dim // 2}")
    cos, sin = cos_cache.unsqueeze(2), sin_cache.unsqueeze(2)  # [B, S, 1, dim/2]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., : dim // 2], rot[..., dim // 2 :]
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        rot = torch.stack([real, imag], dim=-1).reshape(rot.shape)
    else:
        rot = torch.cat([real, imag], dim=-1)
    out = torch.cat([rot, rest], dim=-1)
    return out.reshape(shape) if x.dim() == 3 else out.transpose(1, 2)
