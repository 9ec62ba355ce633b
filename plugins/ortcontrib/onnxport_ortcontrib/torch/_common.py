"""Small torch helpers shared by the plugin's torch primitives."""

from __future__ import annotations

import torch


def wide(x: torch.Tensor) -> torch.Tensor:
    """``x`` in float32 where it is narrower (onnxruntime's contrib kernels compute half types in
    float32 and round the result once)."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
