"""The pluggy hooks of onnxport.

A plugin is a module (or object) with functions marked ``@hookimpl``, named by an entry point
in the ``onnxport`` group::

    [project.entry-points.onnxport]
    torch = "onnxport_torch.plugin"

The core registers its own defaults (the opset adapters) through the same hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .registry import Registrar

PROJECT = "onnxport"

hookspec = pluggy.HookspecMarker(PROJECT)
#: Marker for plugin hook implementations: ``@hookimpl def onnxport_register(registrar): ...``
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def onnxport_register(registrar: Registrar) -> None:
    """Register what a plugin brings.

    :param registrar: the registration object. Call ``registrar.add_backend(backend)`` to add a
        framework backend, ``registrar.discover(package, backend=name)`` to register every
        primitive marked with ``@importer``/``@exporter`` in a package's modules,
        ``registrar.add_import(...)``/``registrar.add_export(...)`` for single primitives and
        ``registrar.add_adapter(...)`` for opset version adapters and
        ``registrar.add_down_adapter(...)`` for rewrites to older opsets on export. A backend
        object meets :mod:`onnxport.plugin.backend`'s contract. Duplicate registrations raise.
    """


@hookspec(firstresult=True)
def onnxport_backend_for(obj: Any) -> str | None:
    """Name the backend that exports a framework object, or return None.

    :param obj: the object handed to :func:`onnxport.export_model` (a ``torch.nn.Module``,
        a JAX function, a ``tf.Module`` ...). The first plugin that answers with a backend name
        wins; plugins that do not recognise the object return None.
    """
