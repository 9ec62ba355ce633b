"""CausalConvWithState (opset 27): depthwise causal 1-D convolution carrying the last k-1 steps."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor


@importer("CausalConvWithState", since=27)
def causal_conv_with_state(ctx, x, weight, bias=None, past_state=None, *, activation):
    """``x`` [B, C, L], ``weight`` [C, 1, k]: returns (output [B, C, L], present_state [B, C, k-1])."""
    x, weight = tensor(x), tensor(weight)
    if rank(x) != 3 or rank(weight) != 3:
        raise ctx.error(f"input and weight must be rank 3, got {rank(x)} and {rank(weight)}")
    act = activation or "none"
    if act not in ("none", "silu", "swish"):
        raise ctx.error(f"unknown activation {act!r} (one of 'none', 'silu', 'swish')")
    c, k = int(weight.shape[0]), int(weight.shape[2])
    if past_state is None:
        past_state = tf.zeros(tf.stack([tf.shape(x)[0], c, k - 1]), x.dtype)
    padded = tf.concat([tf.cast(past_state, x.dtype), x], axis=2)
    n = tf.shape(x)[2]
    w = tf.cast(weight[:, 0, :], x.dtype)  # [C, k]
    y = None
    for j in range(k):  # depthwise taps: y[t] = sum_j w[j] * padded[t + j]
        t = padded[:, :, j:j + n] * w[None, :, j:j + 1]
        y = t if y is None else y + t
    if bias is not None:
        y = y + tf.reshape(tf.cast(bias, x.dtype), (1, c, 1))
    if act != "none":
        y = y * tf.sigmoid(y)
    state = padded[:, :, tf.shape(padded)[2] - (k - 1):]
    return y, state
