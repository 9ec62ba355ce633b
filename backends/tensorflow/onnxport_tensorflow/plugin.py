"""The TensorFlow backend's pluggy hooks."""

from __future__ import annotations

from typing import Any

from onnxport import hookimpl


@hookimpl
def onnxport_register(registrar) -> None:
    from .importer import TensorflowBackend

    registrar.add_backend(TensorflowBackend())
    registrar.discover("onnxport_tensorflow.ops", backend="tensorflow")


@hookimpl
def onnxport_backend_for(obj: Any) -> str | None:
    import sys

    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(obj, (tf.Module, tf.types.experimental.GenericFunction)):
        return "tensorflow"
    return None
