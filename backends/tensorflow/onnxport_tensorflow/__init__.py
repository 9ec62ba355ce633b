"""onnxport-tensorflow: ONNX models as tf.Modules (SavedModel, TFLite, Keras)."""

from .importer import TensorflowBackend, TfModel

__all__ = ["TensorflowBackend", "TfModel"]
