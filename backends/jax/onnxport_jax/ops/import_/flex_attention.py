"""ai.onnx.preview FlexAttention: scaled dot-product attention with score_mod / prob_mod subgraphs.

The modifier subgraphs arrive as callables ``body(x) -> [y]`` and run inside the same trace, so the
whole op stays jittable as long as the subgraphs are.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ._static import np_dtype


def _softmax_dtype(dtype, softmax_precision):
    """The softmax dtype: the attribute when set, else float32 below 32 bits, else the input type."""
    if softmax_precision:
        return np_dtype(softmax_precision)
    dt = np.dtype(dtype)
    return np.dtype(np.float32) if dt.itemsize < 4 else dt


def _modify(ctx, body, x, what: str):
    outs = body(x)
    if len(outs) != 1:
        raise ctx.error(f"the {what} subgraph must produce one output, got {len(outs)}")
    y = jnp.asarray(outs[0])
    if tuple(y.shape) != tuple(x.shape):
        raise ctx.error(f"the {what} subgraph changed the shape {tuple(x.shape)} to {tuple(y.shape)}")
    return y.astype(x.dtype)


@importer("FlexAttention", since=1, domain="ai.onnx.preview")
def flex_attention(ctx, q, k, v, *, prob_mod, scale, score_mod, softmax_precision):
    """Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev]; GQA by head groups."""
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ctx.error(f"FlexAttention needs rank-4 Q, K, V, got ranks {q.ndim}, {k.ndim}, {v.ndim}")
    hq, hkv = q.shape[1], k.shape[1]
    if hq != hkv:
        if hq % hkv:
            raise ctx.error(f"{hq} query heads cannot share {hkv} key/value heads")
        k, v = jnp.repeat(k, hq // hkv, axis=1), jnp.repeat(v, hq // hkv, axis=1)
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    s = jnp.asarray(np.sqrt(np.float32(scale)), q.dtype)  # split over Q and K, as the spec's reference
    scores = jnp.matmul(q * s, jnp.swapaxes(k * s, -1, -2), precision=lax.Precision.HIGHEST)
    ct = _softmax_dtype(q.dtype, softmax_precision)
    scores = scores.astype(ct)
    if score_mod is not None:
        scores = _modify(ctx, score_mod, scores, "score_mod")
    probs = jax.nn.softmax(scores, axis=-1)
    if prob_mod is not None:
        probs = _modify(ctx, prob_mod, probs, "prob_mod")
    y = jnp.matmul(probs, v.astype(ct), precision=lax.Precision.HIGHEST)
    return y.astype(v.dtype)
