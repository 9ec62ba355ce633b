"""The user-facing functions: load, save, import_model, export_model, backends."""

from __future__ import annotations

import os
from typing import Any

import onnx
import onnx_ir as ir

from . import driver as _convert
from . import io as _io
from . import validate as _validate
from .backend import Backend, export_part
from .errors import BackendNotFoundError
from .plugins import manager, registry


def backends() -> list[str]:
    """Names of the installed backends (``["torch", ...]``)."""
    return sorted(registry().backends)


def get_backend(name: str) -> Backend:
    """The registered backend object called ``name``."""
    reg = registry()
    if name not in reg.backends:
        installed = ", ".join(sorted(reg.backends)) or "none"
        raise BackendNotFoundError(
            f"backend {name!r} is not installed (installed: {installed}); "
            f"pip install onnxport-{name}"
        )
    return reg.backends[name]


def _fresh_model(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> ir.Model:
    if isinstance(model, ir.Model):
        # adaptation rewrites nodes: work on a copy, the caller's model stays as it was
        _validate.check_ir_nesting(model)
        return _io.load(ir.serde.serialize_model(model), base_dir=_io.external_base_dir(model))
    return _io.load(model)


def import_model(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    backend: str = "torch",
    **options: Any,
) -> Any:
    """Import an ONNX model into a framework.

    :param model: a path, serialized bytes, a ``ModelProto`` or an ``onnx_ir.Model``.
    :param backend: the installed backend to import into (see :func:`backends`).
    :param options: backend options (torch: ``modules=True`` to use native layers,
        ``trainable="auto"|"all"|"none"``, ``training=False``).
    :returns: the backend's native object; called with the graph's inputs positionally or by name.
    """
    be = get_backend(backend)
    ir_model = _fresh_model(model)
    plan = _convert.prepare(ir_model, backend, registry(), **options)
    return be.import_model(plan, **options)


def prepare(model: Any, backend: str = "torch", **options: Any) -> _convert.ImportPlan:
    """Validate and adapt a model for ``backend`` without building the framework object."""
    get_backend(backend)
    return _convert.prepare(_fresh_model(model), backend, registry(), **options)


def backend_for(obj: Any) -> str:
    """The backend that exports ``obj`` (asked through the ``onnxport_backend_for`` hook)."""
    name = manager().hook.onnxport_backend_for(obj=obj)
    if name is None:
        raise BackendNotFoundError(
            f"no installed backend exports objects of type {type(obj).__module__}.{type(obj).__qualname__}"
            f" (installed: {', '.join(backends()) or 'none'})"
        )
    return name


def export_model(obj: Any, example_inputs: Any = (), *, opset: int | None = None, **options: Any) -> ir.Model:
    """Export a framework object to an ONNX IR model through the backend that handles it."""
    name = backend_for(obj)
    exp = export_part(get_backend(name))
    if exp is None:
        raise BackendNotFoundError(f"backend {name!r} cannot export models yet")
    return exp.export_model(obj, example_inputs, opset=opset, **options)


def convert(obj: Any, to: str, example_inputs: Any = (), *, opset: int | None = None, **options: Any) -> Any:
    """Move a framework object to another framework: export it to ONNX, then import it into ``to``.

    :param obj: a framework object an installed backend exports (``torch.nn.Module`` ...).
    :param to: the backend to import into (``"torch"``, ``"jax"`` ...).
    :param example_inputs: inputs the exporter traces ``obj`` with.
    :param opset: the opset of the intermediate ONNX model (default: the exporter's).
    :param options: import options of the target backend.
    """
    get_backend(to)
    model = export_model(obj, example_inputs, opset=opset)
    return import_model(model, backend=to, **options)
