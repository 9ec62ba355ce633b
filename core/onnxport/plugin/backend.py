"""The backend contract: everything the core, the CLI, editing, ``check`` and the testkit ask of
a framework backend, in one typed place.

A backend is one object, registered by its plugin (``registrar.add_backend(MyBackend())``):

- **import part** (:class:`Backend`, required): a :attr:`~Backend.name` and
  :meth:`~Backend.import_model` (an :class:`onnxport.importing.plan.ImportPlan` -> the native object).
  Optional, with defaults: :attr:`~Backend.expected_failures` (the reviewed list, empty),
  :attr:`~Backend.dtypes` (the ONNX element types it can hold; all), :attr:`~Backend.keep_functions`
  (model-local functions kept rather than inlined; no), :meth:`~Backend.from_numpy` /
  :meth:`~Backend.to_numpy` (testkit and CLI conversions; numpy arrays pass through),
  :meth:`~Backend.run` (run an imported object on numpy inputs: ``onnxport check``, the testkit),
  :meth:`~Backend.save` / :meth:`~Backend.load` (native files for ``onnxport convert``, with
  :attr:`~Backend.native_suffixes`, :meth:`~Backend.can_load` and :meth:`~Backend.load_with_inputs`)
  and :meth:`~Backend.to_sequential`
  (``onnxport.to_sequential``). An optional method a backend does not override raises
  :class:`NotSupportedError`; callers ask :meth:`Backend.supports` first.
- **export part** (:class:`Exporter`, mixed into the same class): :meth:`~Exporter.export_model`
  (framework object -> ``onnx_ir.Model``; build it with :class:`onnxport.exporting.builder.Builder` and finish
  it with :func:`onnxport.exporting.pipeline.finish`). Which objects a backend exports it says once,
  through its plugin's ``onnxport_backend_for`` hook (asked without building any backend object or
  importing a framework the object cannot belong to); the testkit checks that the hook claims every
  export sample of the backend.
  Optional: :meth:`~Exporter.run_native` (the framework's own outputs: ``onnxport convert``, the
  testkit).

What only the testkit asks (a backend's own node-case variants, its hooks around export samples)
is a protocol of its own: :class:`onnxport.plugin.testkit_support.TestkitSupport`.

:func:`problems` lists what a backend object lacks or gets wrong; the registry refuses a backend
with problems and the testkit's meta-test runs it on every installed backend.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import onnx_ir as ir

from ..errors import OnnxportError
from .options import CORE_IMPORT_OPTIONS, Option, common_export_options

__all__ = ["FEATURES", "Backend", "Exporter", "ImportPlanLike", "NotSupportedError", "accepted_export_options",
           "accepted_import_options", "export_part", "problems"]



@runtime_checkable
class ImportPlanLike(Protocol):
    """What a backend's :meth:`Backend.import_model` reads from the plan it is given: the validated,
    adapted model, the caller's options and per-node dispatch facts. The core's
    :class:`onnxport.importing.plan.ImportPlan` (built a layer above, from this contract's registry)
    is the implementation."""

    model: ir.Model
    backend: str
    options: dict[str, Any]

    def info(self, node: ir.Node) -> Any:
        """The node's primitive, op spec, attributes, opset and version."""

    def check_supported(self, graphs: list[ir.Graph] | None = None) -> None:
        """Raise one error listing every op of the model the backend lacks."""


class NotSupportedError(OnnxportError):
    """A backend was asked for an optional feature it does not provide."""


#: optional features of the import part -> the method that provides it
FEATURES: dict[str, str] = {
    "run": "run",
    "save": "save",
    "load": "load",
    "to_sequential": "to_sequential",
    "from_numpy": "from_numpy",
    "to_numpy": "to_numpy",
}

_ALL_DTYPES: frozenset[ir.DataType] = frozenset(
    d for d in ir.DataType if d not in (ir.DataType.UNDEFINED, ir.DataType.STRING)
)


class Backend(abc.ABC):
    """The import part of a backend, and what every backend has (see the module docstring)."""

    #: the backend's name: ``import_model(..., backend=name)``, ``--onnxport-backend name``
    name: ClassVar[str]
    #: model-local functions stay functions in the import plan (``prepare(keep_functions=...)``)
    keep_functions: ClassVar[bool] = False
    #: the suffixes of the native paths :meth:`save` writes (``""``: a folder); default: none
    native_suffixes: ClassVar[tuple[str, ...]] = ()
    #: the backend's own import options (names, accepted values, doc); the core adds its own
    #: (:data:`onnxport.plugin.options.CORE_IMPORT_OPTIONS`) and refuses any other name or value
    import_options: ClassVar[tuple[Option, ...]] = ()

    @abc.abstractmethod
    def import_model(self, plan: ImportPlanLike, **options: Any) -> Any:
        """The native object for an :class:`onnxport.importing.plan.ImportPlan`; ``options`` are the
        caller's import options."""

    # -- optional, with defaults ----------------------------------------------------------------
    @property
    def expected_failures(self) -> Mapping[str, str]:
        """The reviewed expected failures: testkit case key -> written reason."""
        return {}

    @property
    def dtypes(self) -> frozenset[ir.DataType]:
        """The ONNX element types the backend's tensors can hold (default: every numeric type)."""
        return _ALL_DTYPES

    def from_numpy(self, array: np.ndarray) -> Any:
        """A native tensor with exactly the array's values and dtype (default: the array)."""
        return array

    def to_numpy(self, value: Any) -> np.ndarray:
        """A numpy array with exactly a native tensor's values and dtype."""
        return np.asarray(value)

    def run(self, imported: Any, inputs: list[np.ndarray]) -> list[Any]:
        """Run an imported object on numpy inputs; the outputs as numpy (``check``, testkit).

        Exactly the call a user makes (``imported(*inputs)``), nothing more: no fallback, no
        conversion of the inputs beyond what the call itself accepts; only the outputs are read
        back as numpy."""
        raise self._unsupported("run", "cannot run imported models on numpy inputs")

    def save(self, native: Any, path: str | Path, example_inputs: Sequence[Any] = ()) -> None:
        """Save an imported object in the framework's own format (``onnxport convert``);
        ``example_inputs`` (native tensors) are there for a format that traces the object."""
        raise self._unsupported("save", "cannot save native objects")

    def load(self, path: str | Path) -> Any:
        """Load what :meth:`save` wrote: a callable native object."""
        raise self._unsupported("load", "cannot load native files")

    def load_with_inputs(self, path: str | Path) -> tuple[Any, tuple[Any, ...]]:
        """What :meth:`load` reads, and example inputs to export it with (``onnxport convert``)."""
        raise self._unsupported("load", "cannot load native files")

    def can_load(self, path: str | Path) -> bool:
        """Whether ``path`` is a native file or folder this backend reads (default: none)."""
        return False

    def to_sequential(self, plan: ImportPlanLike, **options: Any) -> Any:
        """A linear model as the framework's sequential container (``onnxport.to_sequential``)."""
        raise self._unsupported("to_sequential", "does not build sequential containers")

    # -- asking ---------------------------------------------------------------------------------
    def supports(self, feature: str) -> bool:
        """Whether this backend provides the optional ``feature`` (a key of :data:`FEATURES`, or
        ``"export"``)."""
        if feature == "export":
            return isinstance(self, Exporter)
        method = FEATURES.get(feature)
        if method is None:
            raise ValueError(f"unknown backend feature {feature!r}; known: export, {', '.join(FEATURES)}")
        return getattr(type(self), method) is not getattr(Backend, method)

    def _unsupported(self, feature: str, what: str) -> NotSupportedError:
        return NotSupportedError(f"backend {self.name!r} {what} (it does not implement {feature}())")


class Exporter(abc.ABC):
    """The export part of a backend: mix it into the backend's class."""

    #: every export option the exporter takes (the core's it accepts among them:
    #: :func:`onnxport.plugin.options.common_export_options`); the core refuses any other name or value
    export_options: ClassVar[tuple[Option, ...]] = common_export_options()

    @abc.abstractmethod
    def export_model(self, obj: Any, example_inputs: Any = (), **options: Any) -> ir.Model:
        """Export a framework object traced on ``example_inputs``; options: ``opset``,
        ``optimize``, ``functions``, ... (:class:`onnxport.exporting.pipeline.ExportOptions`) and the
        exporter's own; ``example_kwargs`` are keyword inputs (the testkit passes them)."""

    def run_native(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any] | None:
        """The framework's own outputs of ``fn`` as numpy arrays in the exported graph's output
        order; ``None`` (default): the testkit calls ``fn`` and flattens tuples, lists and dicts."""
        return None


def accepted_import_options(backend: Backend) -> tuple[Option, ...]:
    """The import options ``backend`` accepts: the core's and its own (``keep_functions=True`` only
    where the backend builds kept model-local functions, :attr:`Backend.keep_functions`)."""
    core = CORE_IMPORT_OPTIONS
    if not type(backend).keep_functions:
        core = tuple(dataclasses.replace(o, accepts=(False, None), doc=o.doc + "; this backend inlines them")
                     if o.name == "keep_functions" else o for o in core)
    return core + tuple(type(backend).import_options)


def accepted_export_options(backend: Backend) -> tuple[Option, ...]:
    """The export options ``backend`` accepts (none when it only imports)."""
    return tuple(type(backend).export_options) if isinstance(backend, Exporter) else ()


def export_part(backend: Backend) -> Exporter | None:
    """The export part of ``backend``, or ``None`` when it only imports."""
    return backend if isinstance(backend, Exporter) else None


def problems(backend: Any, name: str | None = None) -> list[str]:
    """What ``backend`` lacks or gets wrong against the contract (empty: it conforms).

    ``name``: the name it is registered under, when known.
    """
    out: list[str] = []
    if not isinstance(backend, Backend):
        return [
            f"{type(backend).__module__}.{type(backend).__qualname__} is not an onnxport.plugin.backend.Backend: "
            "subclass it (and onnxport.plugin.backend.Exporter when it exports); see CONTRIBUTING.md, 'Add a backend'"
        ]
    bname = getattr(type(backend), "name", None)
    if not isinstance(bname, str) or not bname.isidentifier():
        out.append(f"name must be a non-empty identifier string, not {bname!r}")
    elif name is not None and bname != name:
        out.append(f"registered as {name!r} but named {bname!r}")
    abstract = sorted(getattr(type(backend), "__abstractmethods__", ()))
    if abstract:
        out.append(f"does not implement {', '.join(abstract)}")
    failures = backend.expected_failures
    if not isinstance(failures, Mapping):
        out.append(f"expected_failures must be a mapping, not {type(failures).__name__}")
    elif not all(isinstance(k, str) and isinstance(v, str) for k, v in failures.items()):
        out.append("expected_failures must map case keys (str) to written reasons (str)")
    dts = backend.dtypes
    if not isinstance(dts, frozenset) or not dts or not all(isinstance(d, ir.DataType) for d in dts):
        out.append("dtypes must be a non-empty frozenset of onnx_ir.DataType")
    if not isinstance(type(backend).keep_functions, bool):
        out.append("keep_functions must be a bool")
    for kind, declared in (("import_options", accepted_import_options(backend)),
                           ("export_options", accepted_export_options(backend))):
        if not all(isinstance(o, Option) for o in declared):
            out.append(f"{kind} must be a tuple of onnxport.plugin.options.Option")
            continue
        names = [o.name for o in declared]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            out.append(f"{kind} declares {', '.join(twice)} more than once (the core's import options: "
                       f"{', '.join(o.name for o in CORE_IMPORT_OPTIONS)})")
    return out
