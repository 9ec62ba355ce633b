"""Plugin discovery: entry points of the ``onnxport`` group, loaded loudly."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import threading
from typing import Any

import pluggy

from ..errors import PluginError
from . import hookspecs
from .registry import Registry

#: Comma-separated entry point names that are not loaded (``ONNXPORT_BLOCK_PLUGINS=tensorflow``).
BLOCK_ENV = "ONNXPORT_BLOCK_PLUGINS"

_lock = threading.Lock()
_registry: Registry | None = None
_manager: pluggy.PluginManager | None = None


def _blocked() -> set[str]:
    return {p.strip() for p in os.environ.get(BLOCK_ENV, "").split(",") if p.strip()}


def make_manager(extra_plugins: list[Any] | None = None, entry_points: bool = True):
    """A plugin manager with the core defaults, entry-point plugins and ``extra_plugins``."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    from onnxport_opsets import plugin as core_defaults

    pm.register(core_defaults, name="onnxport.defaults")
    if entry_points:
        blocked = _blocked()
        for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT):
            if ep.name in blocked or pm.has_plugin(ep.name):
                continue
            try:
                plugin = ep.load()
            except Exception as exc:
                raise PluginError(
                    f"onnxport plugin {ep.name!r} ({ep.value}) failed to import: "
                    f"{type(exc).__name__}: {exc}. Set {BLOCK_ENV}={ep.name} to skip it."
                ) from exc
            pm.register(plugin, name=ep.name)
    for plugin in extra_plugins or []:
        pm.register(plugin)
    _check_hook_names(pm)
    return pm


def _check_hook_names(pm: pluggy.PluginManager) -> None:
    """Raise :class:`PluginError` for a hook implementation whose name no hookspec has (a misspelt
    ``onnxport_register`` would otherwise register nothing, silently)."""
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        name = pm.get_name(exc.plugin) or repr(exc.plugin)
        known = sorted(n for n in dir(hookspecs) if n.startswith(f"{hookspecs.PROJECT}_"))
        raise PluginError(f"onnxport plugin {name!r}: {exc}; the hooks are {', '.join(known)}") from exc


def build_registry(pm: pluggy.PluginManager) -> Registry:
    """Run every plugin's ``onnxport_register`` into a fresh registry."""
    reg = Registry()
    for impl in pm.hook.onnxport_register.get_hookimpls():
        name = pm.get_name(impl.plugin) or repr(impl.plugin)
        try:
            impl.function(registrar=reg)
        except PluginError:
            raise
        except Exception as exc:
            from ..errors import OnnxportError

            if isinstance(exc, OnnxportError):
                raise
            raise PluginError(
                f"onnxport plugin {name!r} failed to register: {type(exc).__name__}: {exc}"
            ) from exc
        reg.plugins.append(name)
    reg.check_backends()
    return reg


def registry() -> Registry:
    """The process-wide registry, built on first use from every installed plugin."""
    global _registry, _manager
    with _lock:
        if _registry is None:
            _manager = make_manager()
            _registry = build_registry(_manager)
        return _registry


def manager() -> pluggy.PluginManager:
    registry()
    assert _manager is not None
    return _manager


def reset() -> None:
    """Forget the registry (tests; after installing a plugin at run time)."""
    global _registry, _manager
    with _lock:
        _registry = None
        _manager = None
