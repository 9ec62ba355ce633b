"""The TensorFlow backend's pluggy hooks."""

from __future__ import annotations

from typing import Any

from onnxport import hookimpl


@hookimpl
def onnxport_register(registrar) -> None:
    # by reference: the framework and the primitives are imported when the backend is first used
    registrar.add_backend("tensorflow", "onnxport_tensorflow.importer:TensorflowBackend")
    registrar.discover("onnxport_tensorflow.ops", backend="tensorflow", lazy=True)


@hookimpl
def onnxport_backend_for(obj: Any) -> str | None:
    import sys

    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(obj, (tf.Module, tf.types.experimental.GenericFunction)):
        return "tensorflow"
    # export side (tfexport): Keras 3 layers and models are no tf.Module
    keras = sys.modules.get("keras")
    if tf is not None and keras is not None and isinstance(obj, keras.layers.Layer):
        return "tensorflow"
    return None
