"""``onnxport convert IN -o OUT``: between ONNX files and the backends' native files.

IN is an ``.onnx`` file or a native file a backend reads (``Backend.can_load``: a ``.pt2``
program, a SavedModel folder, a ``.keras`` file, an onnxport JAX folder). OUT's suffix picks the
target: ``.onnx``, a suffix a backend lists in ``native_suffixes`` (``.pt2``, ``.pt``), or a
folder for the backend named with ``--to``. Backends provide ``save(native, path, example_inputs)``,
``load(path)`` and ``load_with_inputs(path) -> (native, example_inputs)`` (the backend contract's
optional ``save`` and ``load`` features, asked through ``Backend.supports``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import onnx_ir as ir

from .. import api, progress
from ..errors import BackendNotFoundError, InputError
from ..ir import io as _io
from ..plugin.backend import Backend, Exporter


@dataclasses.dataclass
class Converted:
    """What :func:`convert_file` did: the target (``"onnx"`` or a backend) and, with ``check``,
    the largest absolute difference of the result from onnxruntime on random inputs."""

    source: str
    target: str
    output: Path
    max_diff: float | None = None


def reader_of(path: str | os.PathLike) -> str:
    """``"onnx"`` for an ONNX file, else the installed backend that reads the native file ``path``."""
    p = Path(path)
    if p.suffix == ".onnx" and p.is_file():
        return "onnx"
    if not p.exists():
        raise InputError(f"{p}: no such file or folder")
    for name in api.backends():
        be = api.get_backend(name)
        if be.supports("load") and be.can_load(p):
            return name
    raise BackendNotFoundError(
        f"{p}: no installed backend reads this file (installed: {', '.join(api.backends()) or 'none'}); "
        "inputs are .onnx, .pt2 (pip install onnxport-torch), a SavedModel folder or .keras file "
        "(pip install onnxport-tensorflow), an onnxport JAX folder (pip install onnxport-jax)"
    )


def writer_of(path: str | os.PathLike, to: str | None) -> str:
    """``"onnx"`` or the backend that writes ``path`` (by its suffix; a folder needs ``to``)."""
    p = Path(path)
    if p.suffix == ".onnx":
        return "onnx"
    if to is not None:
        be = api.get_backend(to)
        suffixes = be.native_suffixes
        if not be.supports("save") or not suffixes:
            raise BackendNotFoundError(f"backend {to!r} cannot save native files; write a .onnx file instead")
        if p.suffix not in suffixes:
            raise InputError(f"backend {to!r} writes {', '.join(s or 'a folder' for s in suffixes)}, not {p.name!r}")
        return to
    for name in api.backends():
        be = api.get_backend(name)
        if p.suffix and be.supports("save") and p.suffix in be.native_suffixes:
            return name
    raise InputError(f"{p.name!r}: the suffix names no target; use .onnx, .pt2, .pt or a folder with --to BACKEND")


def _to_numpy(be: Backend, outs: Any) -> list[np.ndarray]:
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    return [np.asarray(be.to_numpy(o)) for o in outs]


def _max_diff(model: ir.Model, run: Any, seed: int = 0) -> float:
    """Largest absolute difference between ``run(numpy inputs)`` and onnxruntime on ``model``."""
    from ..optional import require
    from .check import random_inputs

    ort = require("onnxruntime", extra="onnxport[check]", feature="convert --check (the comparison with onnxruntime)")

    inputs = random_inputs(model, seed=seed)
    sess = ort.InferenceSession(ir.serde.serialize_model(model).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    expected = sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), inputs)})
    got = run(inputs)
    if len(got) != len(expected):
        raise InputError(f"the result has {len(got)} outputs, onnxruntime {len(expected)}")
    diff = 0.0
    for e, a in zip(expected, got):
        e, a = np.asarray(e), np.asarray(a)
        if e.shape != a.shape:
            raise InputError(f"output shape {a.shape}, onnxruntime {e.shape}")
        if e.size and e.dtype.kind in "fciub":
            diff = max(diff, float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)))))
    return diff


def convert_file(src: str | os.PathLike, out: str | os.PathLike, *, to: str | None = None,
                 opset: int | None = None, check: bool = False,
                 import_options: Mapping[str, Any] | None = None,
                 export_options: Mapping[str, Any] | None = None) -> Converted:
    """Convert ``src`` (``.onnx`` or a native file) to ``out`` (``.onnx`` or native files of ``to``).

    :param import_options: options of the import into ``to`` (or the target format's backend).
    :param export_options: options of the export by the framework the model goes through.
    """
    from .check import random_inputs

    source, target, out = reader_of(src), writer_of(out, to), Path(out)
    import_options, export_options = dict(import_options or {}), dict(export_options or {})
    importer = to if target == "onnx" else target
    if import_options:
        if importer is None or importer == "onnx":
            raise InputError("import options need a backend to import into (--to/--backend)")
        api.check_import_options(importer, import_options)
    if export_options:
        exporter = source if source != "onnx" else to
        if exporter is None or exporter == "onnx" or (source == "onnx" and target != "onnx"):
            raise InputError("export options need a framework the model is exported from (a native "
                             "file in, or .onnx in and out through --to)")
        api.check_export_options(exporter, {"opset": opset, **export_options})
    if source == "onnx" and target == "onnx" and to is None and opset is None:
        raise InputError("both sides are ONNX: name a backend to go through with --to/--backend, "
                         "or an --opset to convert the model to")
    with progress.task("convert", total=5) as step:
        step("load")
        if source == "onnx":
            model = _io.load(src)
            if opset is not None:  # through the core's adapters (up, then down where needed)
                from ..exporting.pipeline import convert_opset

                convert_opset(model, opset)
            if target == "onnx" and to is None:
                step("save")
                _io.save(model, out)
                result = Converted(source, "onnx", out)
                if check:
                    step("check")
                    result.max_diff = _max_diff(_io.load(src), _ort_runner(model))
                return result
        else:
            be = api.get_backend(source)
            native, example = be.load_with_inputs(src)
            step("export")
            model = _export(source, native, example, opset, export_options)
        if target == "onnx":
            if source == "onnx":  # through the framework named with --to and back
                be = api.get_backend(to)
                native = api.import_model(model, backend=to, **import_options)
                example = tuple(be.from_numpy(x) for x in random_inputs(model))
                model = _export(to, native, example, opset, export_options)
            step("save")
            _io.save(model, out)
            result = Converted(source, "onnx", out)
            if check:
                step("check")
                if source == "onnx":  # the ONNX written against onnxruntime on the ONNX read
                    result.max_diff = _max_diff(_io.load(src), _ort_runner(model))
                else:  # the native object read against onnxruntime on the ONNX written
                    src_be = api.get_backend(source)
                    result.max_diff = _max_diff(model, lambda xs: _run_native(src_be, native, xs))
            return result
        be = api.get_backend(target)
        step("import")
        native = api.import_model(model, backend=target, **import_options)
        example = tuple(be.from_numpy(x) for x in random_inputs(model))
        step("save")
        be.save(native, out, example)
        result = Converted(source, target, out)
        if check:
            step("check")
            reloaded = be.load(out)
            result.max_diff = _max_diff(model, lambda xs: _run_native(be, reloaded, xs))
        return result


def _export(backend: str, native: Any, example: tuple[Any, ...], opset: int | None,
            options: Mapping[str, Any] | None = None) -> ir.Model:
    """Export ``native`` through ``backend`` itself (a loaded file's object need not be one the
    backend's ``onnxport_backend_for`` hook claims, e.g. a restored SavedModel)."""
    be = api.get_backend(backend)
    if not be.supports("export"):
        raise BackendNotFoundError(f"backend {backend!r} cannot export models yet; write its native files instead")
    return be.export_model(native, example, opset=opset, **(options or {}))


def _ort_runner(model: ir.Model) -> Any:
    from ..optional import require

    ort = require("onnxruntime", extra="onnxport[check]", feature="convert --check (the comparison with onnxruntime)")

    sess = ort.InferenceSession(ir.serde.serialize_model(model).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return lambda xs: sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})


def _run_native(be: Backend, native: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Call a reloaded native object on numpy inputs (converted with the backend's ``from_numpy``),
    through the backend's ``run_native`` where it has one (it calls objects as its exporter does:
    a multi-input Keras model with one list)."""
    args = [be.from_numpy(x) for x in inputs]
    outs = be.run_native(native, tuple(args), {}) if isinstance(be, Exporter) else None
    return [np.asarray(o) for o in outs] if outs is not None else _to_numpy(be, native(*args))
