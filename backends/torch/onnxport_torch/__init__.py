"""onnxport-torch: ONNX <-> PyTorch."""

from typing import Any

__all__ = ["OnnxModule", "TorchBackend"]


def __getattr__(name: str) -> Any:
    """OnnxModule and TorchBackend load the framework on first access (the plugin entry point
    imports this package; a command that does not use this backend never imports it)."""
    if name in __all__:
        from . import importer

        return getattr(importer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

