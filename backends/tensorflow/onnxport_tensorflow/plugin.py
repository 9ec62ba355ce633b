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
    if tf is not None and isinstance(obj, (tf.Module, tf.types.experimental.GenericFunction,
                                           tf.types.experimental.ConcreteFunction)):
        return "tensorflow"
    # a reloaded SavedModel (tf.saved_model.load): a trackable object with a traced __call__
    call = getattr(obj, "__call__", None)  # noqa: B004 - the traced function, not callability
    if tf is not None and isinstance(obj, tf.__internal__.tracking.AutoTrackable) and hasattr(
            call, "get_concrete_function"):
        return "tensorflow"
    # export side (tfexport): Keras 3 layers and models are no tf.Module
    keras = sys.modules.get("keras")
    if tf is not None and keras is not None and isinstance(obj, keras.layers.Layer):
        return "tensorflow"
    return None
