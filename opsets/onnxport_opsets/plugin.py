"""The core's own defaults, registered through the same hook as every plugin: the version
adapters (:mod:`.adapters`) and the down-adapters (:mod:`.down`)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType

from onnxport.errors import PluginError
from onnxport.plugin.hookspecs import hookimpl

from . import adapters as _adapters_pkg
from . import down as _down_pkg
from ._base import _MARK


def _modules(pkg: ModuleType) -> Iterator[ModuleType]:
    for info in pkgutil.iter_modules(pkg.__path__, prefix=pkg.__name__ + "."):
        try:
            yield importlib.import_module(info.name)
        except Exception as exc:
            raise PluginError(f"cannot import adapter module {info.name!r}: {exc}") from exc


def _own(mod: ModuleType) -> Iterator[object]:
    seen: set[int] = set()
    for obj in vars(mod).values():
        if getattr(obj, "__module__", None) == mod.__name__ and id(obj) not in seen:
            seen.add(id(obj))
            yield obj


@hookimpl
def onnxport_register(registrar) -> None:
    for mod in _modules(_adapters_pkg):
        for obj in _own(mod):
            for op_type, version, domain in getattr(obj, _MARK, []) or []:
                registrar.add_adapter(op_type, version, obj, domain=domain)
    for mod in _modules(_down_pkg):
        for obj in _own(mod):
            for op_type, below in _down_pkg.marks(obj):
                registrar.add_down_adapter(op_type, below, obj)
