"""CausalConvWithState (opset 27): depthwise causal 1-D convolution carrying the last k-1 steps."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from onnxport import importer


@importer("CausalConvWithState", since=27)
def causal_conv_with_state(ctx, x, weight, bias=None, past_state=None, *, activation):
    """``x`` [B, C, L], ``weight`` [C, 1, k]: returns (output [B, C, L], present_state [B, C, k-1])."""
    if x.ndim != 3 or weight.ndim != 3:
        raise ctx.error(f"input and weight must be rank 3, got {x.ndim} and {weight.ndim}")
    act = activation or "none"
    if act not in ("none", "silu", "swish"):
        raise ctx.error(f"unknown activation {act!r} (one of 'none', 'silu', 'swish')")
    b, c, _ = x.shape
    k = weight.shape[2]
    if past_state is None:
        past_state = jnp.zeros((b, c, k - 1), x.dtype)
    padded = jnp.concatenate([jnp.asarray(past_state, x.dtype), x], axis=2)
    y = lax.conv_general_dilated(
        padded, jnp.asarray(weight, x.dtype), window_strides=(1,), padding="VALID",
        dimension_numbers=("NCH", "OIH", "NCH"), feature_group_count=c,
        precision=lax.Precision.HIGHEST,
    )
    if bias is not None:
        y = y + jnp.reshape(bias, (1, c, 1)).astype(y.dtype)
    if act != "none":
        y = jax.nn.silu(y)
    state = padded[:, :, padded.shape[2] - (k - 1):]
    return y.astype(x.dtype), state
