"""The user-facing functions: load, save, import_model, export_model, backends."""

from __future__ import annotations

import contextlib
import gc
import os
import types
from collections.abc import Iterator
from typing import Any

import onnx
import onnx_ir as ir

from . import progress
from .errors import BackendNotFoundError
from .importing import plan as _convert
from .ir import io as _io
from .ir import validate as _validate
from .plugin import options as _options
from .plugin.backend import Backend, accepted_export_options, accepted_import_options, export_part
from .plugin.discovery import manager, registry


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


def check_import_options(backend: str, options: dict[str, Any]) -> Backend:
    """The backend called ``backend``; an :class:`InputError` for an import option it does not
    declare or a value it does not accept (see :mod:`onnxport.plugin.options`)."""
    be = get_backend(backend)
    _options.check(options, accepted_import_options(be), what=f"import option of backend {backend!r}")
    return be


def check_export_options(backend: str, options: dict[str, Any]) -> Backend:
    """The backend called ``backend``; an :class:`InputError` for an export option it does not
    declare or a value it does not accept."""
    be = get_backend(backend)
    _options.check(options, accepted_export_options(be), what=f"export option of backend {backend!r}")
    return be


def _fresh_model(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> ir.Model:
    if isinstance(model, ir.Model):
        # adaptation rewrites nodes: work on a copy, the caller's model stays as it was
        _validate.check_ir_nesting(model)
        return _io.load(ir.serde.serialize_model(model), base_dir=_io.external_base_dir(model), keep_source=True)
    # the file's weights are read once, by the backend
    return _io.load(model, in_place=True, keep_source=True)


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused: an import allocates millions of objects that
    live on, and each full collection walks them all (a third of the import of a long graph)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def import_model(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    backend: str = "torch",
    **options: Any,
) -> Any:
    """Import an ONNX model into a framework.

    :param model: a path, serialized bytes, a ``ModelProto`` or an ``onnx_ir.Model``.
    :param backend: the installed backend to import into (see :func:`backends`).
    :param options: backend options (torch: ``modules=True`` to use native layers,
        ``trainable="auto"|"all"|"none"``, ``training=False``, ``device=``/``dtype=`` to place the weights); each backend declares the ones it
        takes (``get_backend(name).import_options``), any other is an :class:`InputError`.
    :returns: the backend's native object; called with the graph's inputs positionally or by name.
    """
    be = check_import_options(backend, options)
    with _no_cyclic_gc(), progress.task(f"import ({backend})", total=3) as step:
        step("load")
        ir_model = _fresh_model(model)
        step("validate and adapt")
        plan = _convert.prepare(ir_model, backend, registry(), **options)
        step("build")
        return be.import_model(plan, **options)


def prepare(model: Any, backend: str = "torch", **options: Any) -> _convert.ImportPlan:
    """Validate and adapt a model for ``backend`` without building the framework object."""
    check_import_options(backend, options)
    return _convert.prepare(_fresh_model(model), backend, registry(), **options)


#: module roots whose objects another backend's distribution exports (the hint in BackendNotFoundError)
_PACKAGE_OF = {"keras": "tensorflow", "flax": "jax", "jaxlib": "jax", "builtins": "<framework>",
               "numpy": "<framework>"}


def backend_for(obj: Any, example_inputs: Any = ()) -> str:
    """The backend that exports ``obj`` (asked through the ``onnxport_backend_for`` hook); for a
    plain function, the backend that claims its first example input (a torch tensor, a JAX array)."""
    name = manager().hook.onnxport_backend_for(obj=obj)
    first = _first_leaf(example_inputs)
    if name is None and callable(obj):
        if first is not None:
            name = manager().hook.onnxport_backend_for(obj=first)
    neutral = isinstance(obj, types.FunctionType) and (first is None or type(first).__module__ in ("numpy", "builtins"))
    if name is None and neutral:
        # a plain function of numpy inputs names no framework: the one installed backend traces it
        installed = backends()
        if len(installed) == 1:
            return installed[0]
        if installed:
            raise BackendNotFoundError(
                f"a plain function of {type(first).__name__ if first is not None else 'no'} inputs names no framework "
                f"and several backends are installed ({', '.join(installed)}): pass backend=, or framework "
                "arrays as example inputs")
    if name is None:
        probe = _first_leaf(example_inputs) if isinstance(obj, types.FunctionType) else obj
        mro = type(obj if probe is None else probe).__mro__
        root = mro[-2 if len(mro) > 1 else -1].__module__.split(".")[0]  # the framework's base class
        root = _PACKAGE_OF.get(root, root)
        raise BackendNotFoundError(
            f"no installed backend exports objects of type {type(obj).__module__}.{type(obj).__qualname__}"
            f" (installed: {', '.join(backends()) or 'none'}); pip install onnxport-{root}"
        )
    return name


def _first_leaf(inputs: Any) -> Any:
    """The first element of nested tuples / lists / dicts of example inputs (None when empty)."""
    if isinstance(inputs, (tuple, list)):
        for x in inputs:
            leaf = _first_leaf(x)
            if leaf is not None:
                return leaf
        return None
    if isinstance(inputs, dict):
        return _first_leaf(list(inputs.values()))
    return inputs


def export_model(obj: Any, example_inputs: Any = (), *, opset: int | None = None, backend: str | None = None,
                 **options: Any) -> ir.Model:
    """Export a framework object to an ONNX IR model through the backend that handles it.

    :param backend: the exporting backend where the object and its inputs do not say (a plain
        function of numpy arrays); default: the backend that claims the object or its first input.
    """
    name = backend or backend_for(obj, example_inputs)
    exp = export_part(get_backend(name))
    if exp is None:
        raise BackendNotFoundError(f"backend {name!r} cannot export models yet")
    check_export_options(name, {"opset": opset, **options})
    with progress.task(f"export ({name})", total=1) as step:
        step("trace")
        return exp.export_model(obj, example_inputs, opset=opset, **options)


def convert(obj: Any, to: str, example_inputs: Any = (), *, opset: int | None = None,
            export_options: dict[str, Any] | None = None, **options: Any) -> Any:
    """Move a framework object to another framework: export it to ONNX, then import it into ``to``.

    :param obj: a framework object an installed backend exports (``torch.nn.Module``, a Keras
        model, a JAX function ``fn(params, *inputs)`` with ``export_options={"params": params}``),
        or an ONNX model (a path, bytes, ``ModelProto`` or ``onnx_ir.Model``: only imported).
    :param to: the backend to import into (``"torch"``, ``"jax"``, ``"tensorflow"``).
    :param example_inputs: inputs the exporter traces ``obj`` with.
    :param opset: the opset of the intermediate ONNX model (default: the exporter's).
    :param export_options: options of the exporting backend (``params=``, ``dynamic_shapes=`` ...).
    :param options: import options of the target backend.
    :raises BackendNotFoundError: the exporter or the importer is not installed (naming the package).
    """
    check_import_options(to, options)
    if isinstance(obj, (str, os.PathLike, bytes, onnx.ModelProto, ir.Model)):
        return import_model(obj, backend=to, **options)
    model = export_model(obj, example_inputs, opset=opset, **(export_options or {}))
    return import_model(model, backend=to, **options)
