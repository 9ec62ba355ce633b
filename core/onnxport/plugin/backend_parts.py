"""Reusable parts of a backend class: what a backend package lays out the usual way needs not
be written again in each backend."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar


class PackageNative:
    """Native files and expected failures read from the backend's own package.

    Mix in before :class:`onnxport.plugin.backend.Backend`. The package (the one the backend class is
    defined in) holds ``native.py`` with ``can_load(path)``, ``save(obj, path, example_inputs)``
    and ``load(path) -> (obj, example inputs)``, and ``expected_failures.py`` with
    ``EXPECTED_FAILURES``; both are imported on first use.
    """

    #: the suffixes of native paths (``""``: a folder)
    native_suffixes: ClassVar[tuple[str, ...]] = ("",)

    def _package_module(self, name: str) -> ModuleType:
        package = type(self).__module__.rpartition(".")[0]
        return importlib.import_module(f"{package}.{name}")

    def can_load(self, path: Any) -> bool:
        """Whether ``path`` is a native file or folder this backend reads."""
        return self._package_module("native").can_load(path)

    def save(self, native_obj: Any, path: str | Path, example_inputs: Sequence[Any] = ()) -> None:
        """Write ``native_obj`` as native files at ``path`` (see the backend's ``native`` module)."""
        self._package_module("native").save(native_obj, path, example_inputs)

    def load(self, path: str | Path) -> Any:
        """The callable native object at ``path``."""
        return self.load_with_inputs(path)[0]

    def load_with_inputs(self, path: str | Path) -> tuple[Any, tuple[Any, ...]]:
        """The native object at ``path`` and example inputs to export it with."""
        return self._package_module("native").load(path)

    @property
    def expected_failures(self) -> Mapping[str, str]:
        return self._package_module("expected_failures").EXPECTED_FAILURES
