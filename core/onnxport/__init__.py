"""onnxport: move neural networks in and out of ONNX for PyTorch, JAX and TensorFlow."""

from __future__ import annotations

import sys
from typing import Any

from ._moved import MOVED as _MOVED
from ._moved import install as _install_moved
from ._moved import old_module as _old_module
from ._version import __version__
from .api import backend_for, backends, convert, export_model, get_backend, import_model, prepare
from .edit import extract, prune, remove_node, replace_node
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
from .ir.io import load, save
from .plugin.discovery import registry
from .plugin.hookspecs import hookimpl
from .plugin.registry import ImportCase, Registrar, Registry, Sample, exporter, importer, module_exporter

_install_moved(sys.modules[__name__])


def __getattr__(name: str) -> Any:
    # the sequential container loads size-aligned surgery: only on first use
    if name == "to_sequential":
        from .edit import to_sequential

        return to_sequential
    if name in _MOVED:
        return _old_module(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    "__version__",
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
