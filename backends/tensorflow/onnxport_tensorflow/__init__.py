"""onnxport-tensorflow: ONNX models as tf.Modules (SavedModel, TFLite, Keras)."""

from typing import Any

__all__ = ["TensorflowBackend", "TfModel"]


def __getattr__(name: str) -> Any:
    """TensorflowBackend and TfModel load the framework on first access (the plugin entry point
    imports this package; a command that does not use this backend never imports it)."""
    if name in __all__:
        from . import importer

        return getattr(importer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

