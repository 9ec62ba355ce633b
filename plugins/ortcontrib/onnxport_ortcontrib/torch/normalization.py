"""SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization
(com.microsoft) and SimplifiedLayerNormalization (onnxruntime's RMS normalization, which files
put in the default domain) for torch."""

from __future__ import annotations

import torch

from onnxport import importer

from .. import DOMAIN
from ..cases import normalization as C
from ..cases.normalization import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ._common import wide


def _layer_norm(s, gamma, beta, epsilon):
    """LayerNorm over the last axis of float32 ``s``: (y, mean, inv_std) with kept dims."""
    mean = s.mean(dim=-1, keepdim=True)
    d = s - mean
    inv = torch.rsqrt((d * d).mean(dim=-1, keepdim=True) + epsilon)
    y = d * inv * wide(gamma)
    return (y if beta is None else y + wide(beta)), mean, inv


def _rms_norm(s, gamma, epsilon, dims=(-1,)):
    inv = torch.rsqrt((s * s).mean(dim=dims, keepdim=True) + epsilon)
    return s * inv * wide(gamma), inv


def _outputs(ctx, y, mean, inv, total, dtype):
    outs = (y.to(dtype), mean, inv, total.to(dtype))
    return outs[0] if ctx.num_outputs == 1 else outs[: ctx.num_outputs]


@importer("SkipLayerNormalization", since=1, domain=DOMAIN, cases=C.skip_layer_norm_cases())
def skip_layer_normalization(ctx, x, skip, gamma, beta=None, bias=None, *, epsilon=1e-12):
    """LayerNorm(x + skip + bias) * gamma + beta over the hidden axis; outputs: output, mean,
    inv_std_var (float32, a trailing 1), input_skip_bias_sum."""
    s = wide(x) + wide(skip)
    if bias is not None:
        s = s + wide(bias)
    y, mean, inv = _layer_norm(s, gamma, beta, epsilon)
    return _outputs(ctx, y, mean.float(), inv.float(), s, x.dtype)


@importer("SkipSimplifiedLayerNormalization", since=1, domain=DOMAIN, cases=C.skip_simplified_layer_norm_cases())
def skip_simplified_layer_normalization(ctx, x, skip, gamma, bias=None, *, epsilon=1e-12):
    """RMSNorm(x + skip + bias) * gamma; outputs: output, mean (zeros, as onnxruntime writes:
    RMS normalization has none), inv_std_var, input_skip_bias_sum."""
    s = wide(x) + wide(skip)
    if bias is not None:
        s = s + wide(bias)
    y, inv = _rms_norm(s, gamma, epsilon)
    return _outputs(ctx, y, torch.zeros_like(inv, dtype=torch.float32), inv.float(), s, x.dtype)


def _stash_dtype(ctx, stash_type):
    if int(stash_type) == 1:
        return torch.float32
    if int(stash_type) == 10:
        return torch.float16
    if int(stash_type) == 16:
        return torch.bfloat16
    if int(stash_type) == 11:
        return torch.float64
    raise ctx.error(f"stash_type {stash_type} is not a floating type")


@importer("SimplifiedLayerNormalization", since=1, domain="", extension=True, cases=C.simplified_layer_norm_cases())
def simplified_layer_normalization(ctx, x, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    """RMS normalization over dims ``axis..``: ``x / sqrt(mean(x^2) + epsilon) * scale``; outputs
    Y and inv_std_var (in the ``stash_type`` float type, reduced dims kept)."""
    axis = axis % x.dim()
    stash = _stash_dtype(ctx, stash_type)
    s = x.to(stash) if torch.finfo(stash).bits >= torch.finfo(x.dtype).bits else x
    inv = torch.rsqrt((s * s).mean(dim=tuple(range(axis, x.dim())), keepdim=True) + epsilon)
    y = (s * inv).to(x.dtype) * scale
    return y if ctx.num_outputs == 1 else (y, inv.to(stash))


@importer("EmbedLayerNormalization", since=1, domain=DOMAIN, cases=C.embed_layer_norm_cases())
def embed_layer_normalization(ctx, input_ids, segment_ids, word_embedding, position_embedding,
                              segment_embedding=None, gamma=None, beta=None, mask=None, position_ids=None, *,
                              epsilon=1e-12, mask_index_type=1):
    """LayerNorm(word[ids] + position[position_ids] + segment[segment_ids]) * gamma + beta;
    outputs: output, mask_index (the mask's row sums, int32), embedding_sum."""
    if gamma is None:
        raise ctx.error("EmbedLayerNormalization needs gamma (input 5)")
    seq = input_ids.shape[1]
    if position_ids is None:
        position_ids = torch.arange(seq, device=input_ids.device)[None, :]
    s = wide(word_embedding[input_ids.long()]) + wide(position_embedding[position_ids.long()])
    if segment_ids is not None and segment_embedding is not None:
        s = s + wide(segment_embedding[segment_ids.long()])
    y, _, _ = _layer_norm(s, gamma, beta, epsilon)
    if mask is not None:
        mask_index = mask.to(torch.int32).sum(dim=1, dtype=torch.int32)
    else:
        mask_index = torch.zeros(input_ids.shape[0], dtype=torch.int32, device=input_ids.device)
    outs = (y.to(word_embedding.dtype), mask_index, s.to(word_embedding.dtype))
    return outs[0] if ctx.num_outputs == 1 else outs[: ctx.num_outputs]
