"""CausalConvWithState (opset 27): a stateful causal depthwise 1-D convolution (Mamba, Gated
DeltaNet), with the last k-1 input positions carried as state for incremental decoding."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from onnxport import importer

from ...context import NodeContext

_LOW = (torch.float16, torch.bfloat16)


@importer("CausalConvWithState", since=27)
def causal_conv_with_state(ctx: NodeContext, x: torch.Tensor, weight: torch.Tensor,
                           bias: torch.Tensor | None = None, past_state: torch.Tensor | None = None, *,
                           activation: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, present_state): conv over [past_state | x] with one kernel per channel."""
    if activation not in ("none", "silu", "swish"):
        raise ctx.error(f"unknown activation {activation!r} (expected 'none', 'silu' or 'swish')")
    if x.dim() != 3 or weight.dim() != 3:
        raise ctx.error(f"input and weight must be rank 3, got {tuple(x.shape)} and {tuple(weight.shape)}")
    batch, channels, _ = x.shape
    k = weight.shape[2]
    if weight.shape[0] != channels or weight.shape[1] != 1:
        raise ctx.error(f"weight shape {tuple(weight.shape)} is not (channels={channels}, 1, k)")
    if past_state is None:
        past_state = torch.zeros((batch, channels, k - 1), dtype=x.dtype, device=x.device)
    elif tuple(past_state.shape) != (batch, channels, k - 1):
        raise ctx.error(f"past_state shape {tuple(past_state.shape)} is not ({batch}, {channels}, {k - 1})")
    padded = torch.cat([past_state.to(x.dtype), x], dim=2)
    # half types are computed in float32 and rounded once at the end
    work = torch.float32 if x.dtype in _LOW else x.dtype
    y = F.conv1d(padded.to(work), weight.to(work), None if bias is None else bias.to(work), groups=channels)
    if activation != "none":
        y = y.to(x.dtype).to(work)  # the convolution's result is rounded before the activation
        y = y * torch.sigmoid(y)
    present = padded[:, :, padded.shape[2] - (k - 1):]
    return y.to(x.dtype), present
