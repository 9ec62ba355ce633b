"""onnxport: move neural networks in and out of ONNX for PyTorch, JAX and TensorFlow."""

from __future__ import annotations

from .api import backend_for, backends, export_model, get_backend, import_model, prepare
from .errors import (
    BackendNotFoundError,
    ConversionError,
    InputError,
    ModelError,
    OnnxportError,
    PluginError,
    RegistryError,
    UnsafeModelError,
    UnsupportedOpError,
)
from .hookspecs import hookimpl
from .io import load, save
from .plugins import registry
from .registry import Registrar, Registry, Sample, exporter, importer

__version__ = "0.1.0"

__all__ = [
    "BackendNotFoundError",
    "ConversionError",
    "InputError",
    "ModelError",
    "OnnxportError",
    "PluginError",
    "Registrar",
    "Registry",
    "RegistryError",
    "Sample",
    "UnsafeModelError",
    "UnsupportedOpError",
    "backend_for",
    "backends",
    "export_model",
    "exporter",
    "get_backend",
    "hookimpl",
    "import_model",
    "importer",
    "load",
    "prepare",
    "registry",
    "save",
]
