"""onnxport-jax: import ONNX models as pure JAX functions with a params pytree."""

from typing import Any

__all__ = ["JaxBackend", "JaxModel"]


def __getattr__(name: str) -> Any:
    """JaxBackend and JaxModel load the framework on first access (the plugin entry point
    imports this package; a command that does not use this backend never imports it)."""
    if name in __all__:
        from . import importer

        return getattr(importer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

