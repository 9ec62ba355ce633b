"""The core's own defaults, registered through the same hook as every plugin."""

from __future__ import annotations

import importlib
import pkgutil

from onnxport.errors import PluginError
from onnxport.hookspecs import hookimpl

from . import adapters as _adapters_pkg
from ._base import _MARK


@hookimpl
def onnxport_register(registrar) -> None:
    for info in pkgutil.iter_modules(_adapters_pkg.__path__, prefix=_adapters_pkg.__name__ + "."):
        try:
            mod = importlib.import_module(info.name)
        except Exception as exc:
            raise PluginError(f"cannot import adapter module {info.name!r}: {exc}") from exc
        for obj in vars(mod).values():
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            for op_type, version, domain in getattr(obj, _MARK, []) or []:
                registrar.add_adapter(op_type, version, obj, domain=domain)
