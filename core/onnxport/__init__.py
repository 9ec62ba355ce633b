"""onnxport: move neural networks in and out of ONNX for PyTorch, JAX and TensorFlow."""

from __future__ import annotations

from .api import backend_for, backends, convert, export_model, get_backend, import_model, prepare
from .edit import extract, prune, remove_node, replace_node, to_sequential
from .errors import (
    BackendNotFoundError,
    ConversionError,
    InputError,
    MissingDependencyError,
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
from .registry import ImportCase, Registrar, Registry, Sample, exporter, importer, module_exporter

__version__ = "0.1.0"

__all__ = [
    "BackendNotFoundError",
    "ConversionError",
    "ImportCase",
    "InputError",
    "MissingDependencyError",
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
    "convert",
    "export_model",
    "exporter",
    "extract",
    "get_backend",
    "hookimpl",
    "import_model",
    "importer",
    "load",
    "module_exporter",
    "prepare",
    "prune",
    "registry",
    "remove_node",
    "replace_node",
    "save",
    "to_sequential",
]
