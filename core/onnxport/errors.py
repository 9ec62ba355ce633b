"""The exception hierarchy of onnxport: users catch :class:`OnnxportError`."""

from __future__ import annotations


class OnnxportError(Exception):
    """Base class of every error onnxport raises on purpose."""


class ModelError(OnnxportError):
    """The model file or graph is malformed: truncated bytes, a cycle, a missing value."""


class UnsafeModelError(ModelError):
    """The model asks for something onnxport refuses to do (external data outside its folder)."""


class UnsupportedOpError(OnnxportError):
    """One or more ops of a model have no primitive in the requested backend."""

    def __init__(self, message: str, missing: list[tuple[str, str, int, list[str]]] | None = None):
        super().__init__(message)
        #: (domain, op_type, opset, node names) for every unsupported op
        self.missing = missing or []


class RegistryError(OnnxportError):
    """A registration is invalid, for example a duplicate (domain, op_type, since_version)."""


class PluginError(OnnxportError):
    """A plugin named by an ``onnxport`` entry point failed to load or register."""


class BackendNotFoundError(OnnxportError):
    """The requested backend is not installed, or no backend handles an object."""


class ConversionError(OnnxportError):
    """A primitive failed while converting or running a node; the node is named."""


class InputError(OnnxportError, ValueError):
    """An imported model was called with the wrong number, shape or dtype of inputs."""


class MissingDependencyError(OnnxportError, ImportError):
    """A feature needs an optional package that is not installed; the message names the extra
    (``pip install 'onnxport-jax[flax]'``) that installs it."""
