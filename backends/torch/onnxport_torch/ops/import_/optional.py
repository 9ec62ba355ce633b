"""Optional values: an empty optional is ``None``, a full one is its tensor or sequence."""

from __future__ import annotations

from typing import Any

import torch

from onnxport import importer


@importer("Optional", since=28)
def optional(ctx, x: Any = None, *, type: Any = None) -> Any:  # noqa: A002 - the ONNX attribute name
    if x is None and type is None:
        raise ctx.error("an empty Optional needs its 'type' attribute")
    return x


@importer("OptionalHasElement", since=28)
def optional_has_element(ctx, x: Any = None) -> torch.Tensor:
    return torch.tensor(x is not None)


@importer("OptionalGetElement", since=28)
def optional_get_element(ctx, x: Any) -> Any:
    if x is None:
        raise ctx.error("the optional input is empty")
    return x
