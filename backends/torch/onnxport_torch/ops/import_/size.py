"""Size: the number of elements of a tensor."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext


@importer("Size", since=25)
def size(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """The element count of ``x`` as an int64 scalar."""
    return torch.tensor(x.numel(), dtype=torch.int64)
