"""The torch backend's pluggy hooks."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from onnxport import hookimpl
from onnxport.plugin.registry import seeded_numpy


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """torch's CPU random state seeded too (numpy's and Python's as by default), restored after."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        with seeded_numpy(seed):
            yield


@hookimpl
def onnxport_register(registrar) -> None:
    # by reference: the framework and the primitives are imported when the backend is first used
    registrar.add_backend("torch", "onnxport_torch.importer:TorchBackend")
    registrar.discover("onnxport_torch.ops", backend="torch", lazy=True, seeded=seeded)


@hookimpl
def onnxport_backend_for(obj: Any) -> str | None:
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, (torch.nn.Module, torch.Tensor)):
        return "torch"
    return None
