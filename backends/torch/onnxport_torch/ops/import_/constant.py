"""Constant and ConstantOfShape."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import importer

from ...context import ints
from ...dtypes import from_numpy


@importer("Constant", since=25)
def constant(ctx, *, sparse_value=None, value=None, value_float=None, value_floats=None,
             value_int=None, value_ints=None, value_string=None, value_strings=None) -> torch.Tensor:
    if value is not None:
        return from_numpy(value, ctx.output_dtype(0))
    if value_float is not None:
        return torch.tensor(value_float, dtype=torch.float32)
    if value_floats is not None:
        return torch.tensor(value_floats, dtype=torch.float32)
    if value_int is not None:
        return torch.tensor(value_int, dtype=torch.int64)
    if value_ints is not None:
        return torch.tensor(value_ints, dtype=torch.int64)
    if sparse_value is not None:
        raise ctx.error("sparse_value constants are not supported (onnx-ir keeps no sparse tensors)")
    if value_string is not None or value_strings is not None:
        raise ctx.error("string constants have no torch equivalent")
    raise ctx.error("Constant sets none of its value attributes")


@importer("ConstantOfShape", since=25)
def constant_of_shape(ctx, shape: torch.Tensor, *, value: np.ndarray | None = None) -> torch.Tensor:
    dims = ints(ctx, 0, shape)
    device = shape.device if isinstance(shape, torch.Tensor) else None
    if value is None:
        return torch.zeros(dims, dtype=ctx.compute_dtype(torch.float32), device=device)
    fill = ctx.fill if ctx.fill is not None else from_numpy(np.asarray(value).reshape(-1), ctx.output_dtype(0))
    if fill.numel() != 1:
        raise ctx.error(f"value must hold exactly one element, got {fill.numel()}")
    fill = fill.reshape(())
    fill = fill.to(device=device, dtype=ctx.compute_dtype(fill.dtype))
    return fill.expand(dims).clone()
