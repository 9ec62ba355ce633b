"""SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization
(com.microsoft) and SimplifiedLayerNormalization (onnxruntime's RMS normalization, which files
put in the default domain) for JAX."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer

from .. import DOMAIN
from ..cases import normalization as C
from ..cases.normalization import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ._common import wide

_STASH = {1: jnp.float32, 10: jnp.float16, 11: jnp.float64, 16: jnp.bfloat16}


def _layer_norm(s, gamma, beta, epsilon):
    """LayerNorm over the last axis of float32 ``s``: (y, mean, inv_std) with kept dims."""
    mean = jnp.mean(s, axis=-1, keepdims=True)
    d = s - mean
    inv = lax.rsqrt(jnp.mean(d * d, axis=-1, keepdims=True) + jnp.asarray(epsilon, s.dtype))
    y = d * inv * wide(gamma)
    return (y if beta is None else y + wide(beta)), mean, inv


def _outputs(ctx, y, mean, inv, total, dtype):
    outs = (y.astype(dtype), mean, inv, total.astype(dtype))
    return outs[0] if ctx.num_outputs == 1 else outs[: ctx.num_outputs]


@importer("SkipLayerNormalization", since=1, domain=DOMAIN, cases=C.skip_layer_norm_cases())
def skip_layer_normalization(ctx, x, skip, gamma, beta=None, bias=None, *, epsilon=1e-12):
    """LayerNorm(x + skip + bias) * gamma + beta over the hidden axis; outputs: output, mean,
    inv_std_var (float32, a trailing 1), input_skip_bias_sum."""
    s = wide(x) + wide(skip)
    if bias is not None:
        s = s + wide(bias)
    y, mean, inv = _layer_norm(s, gamma, beta, epsilon)
    return _outputs(ctx, y, mean.astype(jnp.float32), inv.astype(jnp.float32), s, x.dtype)


@importer("SkipSimplifiedLayerNormalization", since=1, domain=DOMAIN, cases=C.skip_simplified_layer_norm_cases())
def skip_simplified_layer_normalization(ctx, x, skip, gamma, bias=None, *, epsilon=1e-12):
    """RMSNorm(x + skip + bias) * gamma; outputs: output, mean (zeros, as onnxruntime writes),
    inv_std_var, input_skip_bias_sum."""
    s = wide(x) + wide(skip)
    if bias is not None:
        s = s + wide(bias)
    inv = lax.rsqrt(jnp.mean(s * s, axis=-1, keepdims=True) + jnp.asarray(epsilon, s.dtype))
    y = s * inv * wide(gamma)
    return _outputs(ctx, y, jnp.zeros(inv.shape, jnp.float32), inv.astype(jnp.float32), s, x.dtype)


@importer("SimplifiedLayerNormalization", since=1, domain="", extension=True, cases=C.simplified_layer_norm_cases())
def simplified_layer_normalization(ctx, x, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    """RMS normalization over dims ``axis..``: ``x / sqrt(mean(x^2) + epsilon) * scale``; outputs
    Y and inv_std_var (in the ``stash_type`` float type, reduced dims kept)."""
    stash = _STASH.get(int(stash_type))
    if stash is None:
        raise ctx.error(f"stash_type {stash_type} is not a floating type")
    axis = axis % x.ndim
    s = x.astype(stash) if jnp.finfo(stash).bits >= jnp.finfo(x.dtype).bits else x
    inv = lax.rsqrt(jnp.mean(s * s, axis=tuple(range(axis, x.ndim)), keepdims=True) + jnp.asarray(epsilon, s.dtype))
    y = (s * inv).astype(x.dtype) * scale
    return y if ctx.num_outputs == 1 else (y, inv.astype(stash))


@importer("EmbedLayerNormalization", since=1, domain=DOMAIN, cases=C.embed_layer_norm_cases())
def embed_layer_normalization(ctx, input_ids, segment_ids, word_embedding, position_embedding,
                              segment_embedding=None, gamma=None, beta=None, mask=None, position_ids=None, *,
                              epsilon=1e-12, mask_index_type=1):
    """LayerNorm(word[ids] + position[position_ids] + segment[segment_ids]) * gamma + beta;
    outputs: output, mask_index (the mask's row sums, int32), embedding_sum."""
    if gamma is None:
        raise ctx.error("EmbedLayerNormalization needs gamma (input 5)")
    if position_ids is None:
        position_ids = jnp.arange(input_ids.shape[1])[None, :]
    s = wide(jnp.take(word_embedding, input_ids, axis=0)) + wide(jnp.take(position_embedding, position_ids, axis=0))
    if segment_ids is not None and segment_embedding is not None:
        s = s + wide(jnp.take(segment_embedding, segment_ids, axis=0))
    y, _, _ = _layer_norm(s, gamma, beta, epsilon)
    if mask is not None:
        mask_index = jnp.sum(mask.astype(jnp.int32), axis=1, dtype=jnp.int32)
    else:
        mask_index = jnp.zeros((input_ids.shape[0],), jnp.int32)
    outs = (y.astype(word_embedding.dtype), mask_index, s.astype(word_embedding.dtype))
    return outs[0] if ctx.num_outputs == 1 else outs[: ctx.num_outputs]
