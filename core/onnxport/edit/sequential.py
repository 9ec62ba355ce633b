"""A model as the backend's sequential container, block by block."""

from __future__ import annotations

import os
from typing import Any

import onnx
import onnx_ir as ir

from .. import api
from ..errors import BackendNotFoundError
from .graph import _copy
from .surgery.blocks import block_structure


def to_sequential(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    backend: str = "torch",
    **options: Any,
) -> Any:
    """A model as the backend's sequential container (torch: ``nn.Sequential``).

    One step per ONNX node, native layers where the backend has them; weights are shared with
    nothing else. Blocks whose branches rejoin at one node (residual, concat, multi-branch) become
    nested containers (torch: ``Residual``/``Parallel``). Raises :class:`~onnxport.ModelError`
    naming the node where the graph is neither a chain nor such blocks.
    """
    m = _copy(model)
    block_structure(m)
    be = api.get_backend(backend)
    if not be.supports("to_sequential"):
        raise BackendNotFoundError(f"backend {backend!r} does not build sequential containers")
    plan = api.prepare(m, backend, **options)
    return be.to_sequential(plan, **options)
