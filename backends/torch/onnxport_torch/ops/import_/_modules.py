"""Helpers for module builders: put the model's shared weights into native layers."""

from __future__ import annotations

import torch
from torch import nn


def bind(module: nn.Module, name: str, tensor: torch.Tensor | None) -> None:
    """Make ``module.<name>`` the model's own tensor (a Parameter stays one; others are buffers)."""
    if name in module._parameters:
        del module._parameters[name]
    if name in module._buffers:
        del module._buffers[name]
    if tensor is None:
        module.register_parameter(name, None)
    elif isinstance(tensor, nn.Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)
