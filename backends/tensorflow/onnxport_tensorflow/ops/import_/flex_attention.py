"""ai.onnx.preview FlexAttention: scaled dot-product attention with score_mod / prob_mod subgraphs.

The modifier subgraphs arrive as callables ``body(x) -> [y]`` and run inside the same trace.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor, tf_dtype


def _softmax_dtype(dtype, softmax_precision):
    """The softmax dtype: the attribute when set, else float32 below 32 bits, else the input type."""
    if softmax_precision:
        return tf_dtype(softmax_precision)
    return tf.float32 if dtype.size < 4 else dtype


def _modify(ctx, body, x, what: str):
    outs = body(x)
    if len(outs) != 1:
        raise ctx.error(f"the {what} subgraph must produce one output, got {len(outs)}")
    y = tensor(outs[0])
    if y.shape.as_list() != x.shape.as_list():
        raise ctx.error(f"the {what} subgraph changed the shape {tuple(x.shape)} to {tuple(y.shape)}")
    return tf.cast(y, x.dtype)


@importer("FlexAttention", since=1, domain="ai.onnx.preview")
def flex_attention(ctx, q, k, v, *, prob_mod, scale, score_mod, softmax_precision):
    """Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev]; GQA by head groups."""
    q, k, v = tensor(q), tensor(k), tensor(v)
    if rank(q) != 4 or rank(k) != 4 or rank(v) != 4:
        raise ctx.error(f"FlexAttention needs rank-4 Q, K, V, got ranks {rank(q)}, {rank(k)}, {rank(v)}")
    hq, hkv = q.shape[1], k.shape[1]
    if hq != hkv:
        if hq % hkv:
            raise ctx.error(f"{hq} query heads cannot share {hkv} key/value heads")
        k, v = tf.repeat(k, hq // hkv, axis=1), tf.repeat(v, hq // hkv, axis=1)
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    s = tf.constant(np.sqrt(np.float32(scale)), q.dtype)  # split over Q and K, as the spec's reference
    scores = tf.linalg.matmul(q * s, k * s, transpose_b=True)
    ct = _softmax_dtype(q.dtype, softmax_precision)
    scores = tf.cast(scores, ct)
    if score_mod is not None:
        scores = _modify(ctx, score_mod, scores, "score_mod")
    probs = tf.nn.softmax(scores, axis=-1)
    if prob_mod is not None:
        probs = _modify(ctx, prob_mod, probs, "prob_mod")
    return tf.cast(tf.linalg.matmul(probs, tf.cast(v, ct)), v.dtype)
