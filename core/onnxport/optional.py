"""Optional packages: imported only by the feature that needs them, and a missing one named with
the extra that installs it."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from .errors import MissingDependencyError


def loaded(module: str) -> ModuleType | None:
    """``module`` if something in this process already imported it, else None (never imports:
    an object of a package's type can exist only once that package is imported)."""
    return sys.modules.get(module)


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``; when it (or a package it lives in) is not installed,
    raise :class:`MissingDependencyError` naming ``extra`` (``"onnxport-jax[flax]"``)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and not (module == missing or module.startswith(missing + ".")):
            raise  # the package is there; something it imports is not: not ours to rename
        raise MissingDependencyError(
            f"{feature} needs the {module.split('.')[0]!r} package, which is not installed: "
            f"pip install '{extra}'") from exc


__all__ = ["loaded", "require"]
