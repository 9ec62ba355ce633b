"""onnxport-jax: import ONNX models as pure JAX functions with a params pytree."""

from .importer import JaxBackend, JaxModel

__all__ = ["JaxBackend", "JaxModel"]
