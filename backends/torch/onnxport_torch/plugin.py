"""The torch backend's pluggy hooks."""

from __future__ import annotations

from typing import Any

from onnxport import hookimpl


@hookimpl
def onnxport_register(registrar) -> None:
    # by reference: the framework and the primitives are imported when the backend is first used
    registrar.add_backend("torch", "onnxport_torch.importer:TorchBackend")
    registrar.discover("onnxport_torch.ops", backend="torch", lazy=True)


@hookimpl
def onnxport_backend_for(obj: Any) -> str | None:
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, (torch.nn.Module, torch.Tensor)):
        return "torch"
    return None
