"""The registry of backends, primitives and opset adapters, and the decorators that mark them.

One mechanism for everything a plugin registers: import primitives keyed per backend by
``(domain, op_type, since_version)``, export primitives by framework op name, module export
primitives by module class, version adapters, down-adapters, and the channels-last variants of
import primitives (:mod:`onnxport.importing.layout`). A duplicate key raises
:class:`RegistryError` naming both sources and the plugin package; so does a standard-domain
op or version that ``onnx.defs`` does not define (custom domains are exempt), and, once every
plugin has registered (:meth:`Registry.check_backends`), a primitive for a backend that no
installed plugin provides.

Discovery is lazy where a plugin asks for it: ``add_backend(name, "pkg.module:Class")`` builds the
backend object, and ``discover(package, backend=name, lazy=True)`` imports the primitive modules,
only when that backend is first used (a query about its primitives), so a command that uses one
backend never imports the others' frameworks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import pkgutil
import random
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import PluginError, RegistryError
from . import spec as _spec
from .backend import Backend, problems

_IMPORT_MARK = "__onnxport_import__"
_EXPORT_MARK = "__onnxport_export__"
_MODULE_MARK = "__onnxport_module_export__"
_LAYOUT_MARK = "__onnxport_channels_last__"

#: the channels-last forms a primitive may declare (``.channels_last(form=...)``)
FORMS: Mapping[str, str] = {
    "": "the op on NHWC activations (its output NHWC unless the op's layout says otherwise)",
    "hwio": "the same, reading an ungrouped Conv's weight spatial-major (HWIO)",
    "shuffle": "a Reshape starting a channel shuffle (Reshape, Transpose 1<->2, Reshape) on NHWC data, "
               "called with groups=",
}


def seed_of(name: str) -> int:
    """The random seed of a name (a primitive module, an export target, a test sample): the same on
    every run, machine and worker."""
    return zlib.crc32(name.encode("utf-8"))


@contextlib.contextmanager
def seeded_numpy(seed: int) -> Iterator[None]:
    """Inside: numpy's and Python's global random states seeded with ``seed``; after: the caller's
    states back (the default ``seeded`` of :meth:`Registry.discover`)."""
    import numpy as np

    np_state, py_state = np.random.get_state(), random.getstate()
    np.random.seed(seed % 2**32)
    random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)


#: a backend's seeded random state: ``seeded(seed)`` is a context manager (see :meth:`Registry.discover`)
Seeder = Callable[[int], contextlib.AbstractContextManager[None]]


@dataclasses.dataclass(frozen=True)
class Sample:
    """One example for an export primitive: the testkit traces, exports and compares it.

    ``fn`` is a framework callable (module or function), ``args`` its example inputs and
    ``emits`` the ONNX op types the exported graph must contain. What the sample's module draws at
    import (inputs, weights) is seeded from the module's name, so it is the same on every run.
    Outputs compare at the testkit's per-dtype tolerances unless ``rtol``/``atol`` (or the
    primitive module's ``TEST_TOLERANCES``, with a reason) say otherwise.

    The exported graph runs in onnxruntime, unless it emits custom-domain ops onnxruntime lacks:
    ``reference`` gives their numpy implementations (``{"com.example::Op": fn(*inputs, **attrs)}``,
    or one function when the graph has one custom op type) and onnx.reference runs the graph with
    them; ``runner="import"`` imports the graph back into the backend (its own import primitives,
    a plugin's included) and runs that. Either way the outputs are compared with the framework's.
    """

    fn: Any
    args: tuple[Any, ...]
    emits: tuple[str, ...] = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: None: the testkit's tolerance for the output's dtype, the same as for import cases
    rtol: float | None = None
    atol: float | None = None
    name: str = ""
    reference: Callable[..., Any] | Mapping[str, Callable[..., Any]] | None = None
    runner: str = "onnxruntime"

    def __post_init__(self) -> None:
        if self.runner not in ("onnxruntime", "import"):
            raise RegistryError(f"Sample runner {self.runner!r}: use 'onnxruntime' or 'import'")
        if self.reference is not None and self.runner != "onnxruntime":
            raise RegistryError("a Sample takes reference= (numpy custom ops) or runner='import', not both")


@dataclasses.dataclass(frozen=True)
class ImportCase:
    """A declared test case for an import primitive (custom-domain ops have no node cases).

    The testkit builds a one-node model from ``inputs`` (numpy arrays, in ONNX order) and
    ``attributes``, imports and runs it, and compares with ``expected`` (output arrays), else
    with ``reference(*inputs, **attributes)`` (a numpy function), else with onnxruntime.
    """

    inputs: tuple[Any, ...]
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict)
    expected: tuple[Any, ...] | None = None
    reference: Callable[..., Any] | None = None
    num_outputs: int = 1
    rtol: float | None = None
    atol: float | None = None
    name: str = ""


@dataclasses.dataclass(frozen=True)
class ImportPrimitive:
    """One ONNX op -> framework function, implementing the op's form at ``since``."""

    backend: str
    domain: str
    op_type: str
    since: int
    fn: Callable[..., Any]
    builder: Callable[..., Any] | None = None
    source: str = ""
    cases: tuple[ImportCase, ...] = ()
    #: an op that onnx.defs does not define, added to a standard domain by a plugin
    #: (onnxruntime's ``SimplifiedLayerNormalization`` in the default domain)
    extension: bool = False

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.domain, self.op_type, self.since)


#: an export primitive's samples, or a function that makes them (when the testkit first asks: a
#: sample of a framework layer builds the layer, which costs an import that never runs a sample)
Samples = Sequence[Sample] | Callable[[], Sequence[Sample]]


@dataclasses.dataclass(frozen=True)
class ExportPrimitive:
    """One framework op -> ONNX nodes."""

    backend: str
    target: str
    fn: Callable[..., Any]
    declared_samples: Samples = ()
    source: str = ""

    @functools.cached_property
    def samples(self) -> tuple[Sample, ...]:
        """The samples (made once, on first use, where they were declared as a function)."""
        made = self.declared_samples() if callable(self.declared_samples) else self.declared_samples
        return tuple(made)


@dataclasses.dataclass(frozen=True)
class ModuleExportPrimitive:
    """A whole call of a framework module class -> ONNX nodes (``fn(g, module, *inputs)``);
    ``when(module, *traced_inputs)`` says whether a call can be exported so."""

    backend: str
    cls: type
    fn: Callable[..., Any]
    when: Callable[..., bool] | None = None
    source: str = ""

    @property
    def key(self) -> str:
        return _class_key(self.cls)


@dataclasses.dataclass(frozen=True)
class LayoutVariant:
    """The channels-last form ``form`` (:data:`onnxport.importing.layout.FORMS`) of an import primitive."""

    backend: str
    domain: str
    op_type: str
    since: int
    form: str
    fn: Callable[..., Any]
    source: str = ""


@dataclasses.dataclass(frozen=True)
class Adapter:
    """Rewrites a node of schema version ``from_version`` into the op's next schema version."""

    domain: str
    op_type: str
    from_version: int
    to_version: int
    fn: Callable[..., Any]
    source: str = ""


@dataclasses.dataclass(frozen=True)
class DownAdapter:
    """Rewrites a node written in ``op_type``'s newest form for a model opset below ``below``."""

    op_type: str
    below: int
    fn: Callable[..., Any]
    source: str = ""


@dataclasses.dataclass
class _ImportDecl:
    op_type: str
    since: int
    domain: str
    cases: tuple[ImportCase, ...] = ()
    extension: bool = False


def importer(
    op_type: str, *, since: int, domain: str = "", cases: Sequence[ImportCase] = (), extension: bool = False
) -> Callable[[Callable], Callable]:
    """Mark a function as the import primitive of ``op_type`` in its form at ``since``.

    Stack the decorator to let one function serve a small family of ops (it reads
    ``ctx.op_type``). ``cases`` are extra test cases for the testkit. ``extension=True`` declares
    an op that ``onnx.defs`` does not define in a standard domain (a runtime's addition that files
    use there, such as onnxruntime's ``SimplifiedLayerNormalization`` in the default domain): it is
    registered although ONNX lacks it, and is refused if ONNX does define it. The function gets a ``module_builder`` decorator attribute: a builder
    returns ``(module, runtime_input_indices)`` or None to choose a native layer at import time.
    """

    def mark(fn: Callable) -> Callable:
        decls = list(getattr(fn, _IMPORT_MARK, []))
        decls.append(_ImportDecl(op_type, since, _spec.normalize_domain(domain), tuple(cases), extension))
        setattr(fn, _IMPORT_MARK, decls)
        if not hasattr(fn, "module_builder"):

            def module_builder(builder: Callable) -> Callable:
                fn.__onnxport_builder__ = builder
                return builder

            fn.module_builder = module_builder  # type: ignore[attr-defined]
        if not hasattr(fn, "channels_last"):
            fn.channels_last = functools.partial(_channels_last, fn)  # type: ignore[attr-defined]
        return fn

    return mark


def _channels_last(prim: Callable, variant: Callable | None = None, *, form: str = "") -> Any:
    """``@prim.channels_last`` / ``@prim.channels_last(form="hwio")``: mark a function as a
    channels-last variant of the import primitive ``prim`` (:mod:`onnxport.importing.layout`); it is
    registered with ``prim``, for every op and version ``prim`` is registered for."""

    def mark(fn: Callable) -> Callable:
        setattr(prim, _LAYOUT_MARK, [*getattr(prim, _LAYOUT_MARK, []), (form, fn)])
        return fn

    return mark if variant is None else mark(variant)


def exporter(*targets: str, samples: Samples = ()) -> Callable[[Callable], Callable]:
    """Mark a function as the export primitive of one or more framework ops; ``samples``: its
    samples, or a function that makes them when they are first needed."""

    def mark(fn: Callable) -> Callable:
        decls = list(getattr(fn, _EXPORT_MARK, []))
        decls.extend((t, samples if callable(samples) else tuple(samples)) for t in targets)
        setattr(fn, _EXPORT_MARK, decls)
        return fn

    return mark


def module_exporter(cls: type, *, when: Callable[..., bool] | None = None) -> Callable[[Callable], Callable]:
    """Mark ``fn(g, module, *inputs)`` as the export of every call of a module of exactly class
    ``cls`` (``when(module, *traced_inputs)``: whether a call is exported so)."""

    def mark(fn: Callable) -> Callable:
        setattr(fn, _MODULE_MARK, [*getattr(fn, _MODULE_MARK, []), (cls, when)])
        return fn

    return mark


class BackendTable(Mapping[str, Backend]):
    """The registered backends by name; a backend added by reference is built on first lookup.

    Names (``in``, iteration, ``len``) never build anything; ``table[name]`` builds the object once
    (importing its framework) and checks it against the contract.
    """

    def __init__(self) -> None:
        self._built: dict[str, Backend] = {}
        self._factories: dict[str, Callable[[], Backend]] = {}
        self._order: list[str] = []
        self._lock = threading.RLock()

    def add(self, name: str, backend: Backend | None = None, factory: Callable[[], Backend] | None = None) -> None:
        if name in self._built or name in self._factories:
            raise RegistryError(f"backend {name!r} is registered twice")
        if backend is not None:
            self._built[name] = backend
        else:
            assert factory is not None
            self._factories[name] = factory
        self._order.append(name)

    def is_built(self, name: str) -> bool:
        """Whether the backend object exists yet (its framework imported)."""
        return name in self._built

    def __getitem__(self, name: str) -> Backend:
        if name in self._built:
            return self._built[name]
        if name not in self._factories:
            raise KeyError(name)
        with self._lock:
            if name not in self._built:
                backend = self._factories[name]()
                wrong = problems(backend, name)
                if wrong:
                    cls = f"{type(backend).__module__}.{type(backend).__qualname__}"
                    raise RegistryError(f"backend {cls} does not meet the backend contract: " + "; ".join(wrong))
                self._built[name] = backend
                del self._factories[name]
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        return f"BackendTable({', '.join(f'{n}' + ('' if n in self._built else ' (not loaded)') for n in self._order)})"


def _reference(ref: str) -> Callable[[], Backend]:
    """``"pkg.module:Class"`` -> a factory that imports the module and calls the class."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise RegistryError(f"backend reference {ref!r}: write it as 'package.module:Class'")

    def build() -> Backend:
        try:
            obj = getattr(importlib.import_module(module), attr)
        except Exception as exc:
            raise PluginError(f"cannot load backend {ref!r}: {type(exc).__name__}: {exc}") from exc
        return obj()

    return build


class Registry:
    """Everything the plugins registered. Built once per process by :func:`onnxport.plugin.registry`."""

    def __init__(self) -> None:
        self.backends = BackendTable()
        #: primitive packages registered with ``discover(..., lazy=True)``, not imported yet
        self._pending: dict[str, list[str]] = {}
        self._seeders: dict[str, Seeder] = {}
        self._load_lock = threading.RLock()
        #: find_import answers: (backend, domain, op_type, version) -> primitive (cleared on add_import)
        self._found: dict[tuple[str, str, str, int], ImportPrimitive | None] = {}
        self._imports: dict[str, dict[tuple[str, str, int], ImportPrimitive]] = {}
        self._exports: dict[str, dict[str, ExportPrimitive]] = {}
        self._adapters: dict[tuple[str, str, int], Adapter] = {}
        self._down: dict[str, list[DownAdapter]] = {}
        self._modules: dict[str, dict[str, ModuleExportPrimitive]] = {}
        self._layouts: dict[str, dict[tuple[str, str, int, str], LayoutVariant]] = {}
        self._expected: dict[str, dict[str, tuple[str, str]]] = {}  # backend -> key -> (reason, source)
        self.plugins: list[str] = []

    # -- registration --------------------------------------------------------------------
    def add_backend(self, backend: Backend | str, factory: str | Callable[[], Backend] | None = None) -> None:
        """Add a backend object; it must meet the contract (:mod:`onnxport.plugin.backend`).

        ``add_backend("torch", "onnxport_torch.importer:TorchBackend")`` (a name and a
        ``module:Class`` reference or a factory) adds it by reference: the object is built, and
        checked against the contract, when the backend is first looked up.
        """
        if isinstance(backend, str):
            if factory is None:
                raise RegistryError(f"backend {backend!r} is added by name without a factory or 'module:Class' reference")
            if not backend.isidentifier():
                raise RegistryError(f"backend name {backend!r} must be an identifier")
            self.backends.add(backend, factory=_reference(factory) if isinstance(factory, str) else factory)
            return
        wrong = problems(backend)
        if wrong:
            cls = f"{type(backend).__module__}.{type(backend).__qualname__}"
            raise RegistryError(f"backend {cls} does not meet the backend contract: " + "; ".join(wrong))
        self.backends.add(backend.name, backend)

    def add_import(
        self,
        backend: str,
        op_type: str,
        fn: Callable,
        *,
        since: int,
        domain: str = "",
        builder: Callable | None = None,
        cases: Sequence[ImportCase] = (),
        extension: bool = False,
    ) -> None:
        """Register ``fn`` as ``backend``'s import primitive of ``domain::op_type`` at ``since``
        (``extension``: an op onnx.defs does not define in a standard domain, see :func:`importer`)."""
        domain = _spec.normalize_domain(domain)
        table = self._imports.setdefault(backend, {})
        key = (domain, op_type, since)
        if key in table:
            old = table[key]
            raise RegistryError(
                f"duplicate import primitive for {domain or 'ai.onnx'}::{op_type} since {since} "
                f"in backend {backend!r}: {old.source} and {_source(fn)}{_plugin(fn)}"
            )
        _check_defined(op_type, since, domain, fn, extension)
        table[key] = ImportPrimitive(backend, domain, op_type, since, fn, builder, _source(fn), tuple(cases),
                                     extension)
        self._found.clear()

    def add_layout_variant(self, backend: str, op_type: str, fn: Callable, *, since: int,
                           domain: str = "", form: str = "") -> None:
        """Register ``fn`` as the channels-last form ``form`` of ``backend``'s import primitive of
        ``op_type`` at ``since`` (:mod:`onnxport.importing.layout`); one per backend, op, version and form."""
        if form not in FORMS:
            raise RegistryError(f"{_source(fn)}: unknown channels-last form {form!r} (forms: {sorted(FORMS)})")
        domain = _spec.normalize_domain(domain)
        table = self._layouts.setdefault(backend, {})
        key = (domain, op_type, since, form)
        if key in table:
            raise RegistryError(
                f"duplicate channels-last variant{f' {form!r}' if form else ''} for {domain or 'ai.onnx'}::"
                f"{op_type} since {since} in backend {backend!r}: {table[key].source} and {_source(fn)}{_plugin(fn)}"
            )
        _check_defined(op_type, since, domain, fn)
        table[key] = LayoutVariant(backend, domain, op_type, since, form, fn, _source(fn))

    def layout_variants(self, backend: str, primitive: ImportPrimitive) -> dict[str, Callable[..., Any]]:
        """The channels-last variants registered for ``primitive`` in ``backend``, by form."""
        self.load(backend)
        table = self._layouts.get(backend, {})
        return {form: table[(*primitive.key, form)].fn for form in FORMS if (*primitive.key, form) in table}

    def add_export(self, backend: str, target: str, fn: Callable, *, samples: Samples = ()) -> None:
        table = self._exports.setdefault(backend, {})
        if target in table:
            raise RegistryError(
                f"duplicate export primitive for {target!r} in backend {backend!r}: "
                f"{table[target].source} and {_source(fn)}{_plugin(fn)}"
            )
        if callable(samples):
            make = samples

            def samples() -> Sequence[Sample]:
                with self.seeded(backend, target):
                    return make()

        table[target] = ExportPrimitive(backend, target, fn, samples if callable(samples) else tuple(samples),
                                        _source(fn))

    def seeded(self, backend: str, name: str) -> contextlib.AbstractContextManager[None]:
        """``backend``'s random state seeded by ``name`` (the ``seeded`` its plugin gave
        :meth:`discover`; numpy's and Python's by default), restored on leaving."""
        return self._seeders.get(backend, seeded_numpy)(seed_of(name))

    def add_adapter(
        self, op_type: str, from_version: int, fn: Callable, *, domain: str = ""
    ) -> None:
        domain = _spec.normalize_domain(domain)
        vs = _spec.versions(op_type, domain)
        deprecated = bool(vs) and _spec.get_spec(op_type, vs[-1], domain).deprecated
        if from_version not in vs or (from_version == vs[-1] and not deprecated):
            raise RegistryError(
                f"adapter {_source(fn)} for {op_type} from version {from_version}: ONNX versions "
                f"are {list(vs)}; an adapter starts from one that is not the newest, unless the "
                "op is deprecated (then it rewrites the node into another op)"
            )
        key = (domain, op_type, from_version)
        if key in self._adapters:
            raise RegistryError(
                f"duplicate adapter for {op_type} from version {from_version}: "
                f"{self._adapters[key].source} and {_source(fn)}{_plugin(fn)}"
            )
        to_version = vs[vs.index(from_version) + 1] if from_version != vs[-1] else from_version
        self._adapters[key] = Adapter(domain, op_type, from_version, to_version, fn, _source(fn))

    def add_down_adapter(self, op_type: str, below: int, fn: Callable) -> None:
        """Register ``fn(node, ctx)`` as the rewrite of ``op_type`` for model opsets below ``below``
        (:func:`onnxport.exporting.pipeline.downgrade` runs it with an :class:`onnxport.exporting.pipeline.DownContext`)."""
        vs = _spec.versions(op_type)
        if below not in vs:
            raise RegistryError(
                f"down-adapter {_source(fn)} for {op_type} below opset {below}: ONNX versions of "
                f"{op_type} are {list(vs)}; ``below`` is the version whose form it rewrites{_plugin(fn)}"
            )
        rules = self._down.setdefault(op_type, [])
        for old in rules:
            if old.below == below:
                raise RegistryError(
                    f"duplicate down-adapter for {op_type} below opset {below}: {old.source} and "
                    f"{_source(fn)}{_plugin(fn)}"
                )
        rules.append(DownAdapter(op_type, below, fn, _source(fn)))

    def add_module_export(self, backend: str, cls: type, fn: Callable, *,
                          when: Callable[..., bool] | None = None) -> None:
        """Register ``fn(g, module, *inputs)`` as the export of calls of ``cls`` modules."""
        table = self._modules.setdefault(backend, {})
        key = _class_key(cls)
        if key in table:
            raise RegistryError(
                f"duplicate module export primitive for {key} in backend {backend!r}: "
                f"{table[key].source} and {_source(fn)}{_plugin(fn)}"
            )
        table[key] = ModuleExportPrimitive(backend, cls, fn, when, _source(fn))

    def check_backends(self) -> None:
        """Raise when a primitive is registered for a backend no plugin added (called once every
        plugin has registered), naming the plugin packages that registered them."""
        tables: list[tuple[str, dict[Any, Any]]] = [
            *self._imports.items(), *self._exports.items(), *self._modules.items(), *self._layouts.items()
        ]
        stray: dict[str, set[str]] = {}
        for backend, table in tables:
            if backend not in self.backends and table:
                stray.setdefault(backend, set()).update(_package(p.fn) for p in table.values())
        for backend, packages in self._pending.items():
            if backend not in self.backends and packages:
                stray.setdefault(backend, set()).update(p.split(".")[0] for p in packages)
        if stray:
            installed = ", ".join(sorted(self.backends)) or "none"
            lines = [f"  {b!r} (plugin package {', '.join(sorted(pkgs))})" for b, pkgs in sorted(stray.items())]
            raise RegistryError(
                f"primitives are registered for backends that are not installed (installed: {installed}):\n"
                + "\n".join(lines)
            )

    def add_expected_failures(self, backend: str, failures: Mapping[str, str], *, source: str) -> None:
        """A plugin's reviewed expected failures for cases of ``backend``: exact case key -> reason.

        ``source`` names the list (the plugin module: ``__name__``). The testkit treats these like
        the backend's own list: a listed case must fail, with the reason shown.
        """
        table = self._expected.setdefault(backend, {})
        for key, reason in failures.items():
            if key in table:
                raise RegistryError(
                    f"expected failure {key!r} for backend {backend!r} is listed twice: by {table[key][1]} and {source}"
                )
            table[key] = (reason, source)

    def expected_failures(self, backend: str) -> dict[str, tuple[str, str]]:
        """The expected failures plugins declared for ``backend``: key -> (reason, source)."""
        return dict(self._expected.get(backend, {}))

    def discover(self, package: str, *, backend: str, lazy: bool = False, seeded: Seeder | None = None) -> int:
        """Import every module under ``package`` and register the primitives marked in them.

        Import errors propagate as :class:`PluginError` naming the module. Returns the number
        of primitives registered. With ``lazy=True`` nothing is imported now (0 is returned):
        the package is discovered when ``backend``'s primitives are first asked for.

        Each module is imported inside ``seeded(seed_of(module name))`` (default
        :func:`seeded_numpy`; a backend whose framework has its own random state passes one that
        seeds it too and restores it after): what a module draws at import (its samples' inputs and
        weights) is the same on every run, and the caller's random state is left alone. The testkit
        runs each sample inside :meth:`seeded` as well.
        """
        if seeded is not None:
            self._seeders[backend] = seeded
        if lazy:
            self._pending.setdefault(backend, []).append(package)
            return 0
        try:
            with self.seeded(backend, package):
                pkg = importlib.import_module(package)
        except Exception as exc:
            raise PluginError(f"cannot import primitive package {package!r}: {exc}") from exc
        modules = [pkg]
        for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
            try:
                with self.seeded(backend, info.name):
                    modules.append(importlib.import_module(info.name))
            except Exception as exc:
                raise PluginError(f"cannot import primitive module {info.name!r}: {exc}") from exc
        count = 0
        seen: set[int] = set()
        for mod in modules:
            for obj in list(vars(mod).values()):
                if id(obj) in seen or getattr(obj, "__module__", None) != mod.__name__:
                    continue
                seen.add(id(obj))
                for decl in getattr(obj, _IMPORT_MARK, []) or []:
                    self.add_import(
                        backend,
                        decl.op_type,
                        obj,
                        since=decl.since,
                        domain=decl.domain,
                        builder=getattr(obj, "__onnxport_builder__", None),
                        cases=decl.cases,
                        extension=decl.extension,
                    )
                    count += 1
                    for form, variant in getattr(obj, _LAYOUT_MARK, []):
                        self.add_layout_variant(backend, decl.op_type, variant, since=decl.since,
                                                domain=decl.domain, form=form)
                for target, samples in getattr(obj, _EXPORT_MARK, []) or []:
                    self.add_export(backend, target, obj, samples=samples)
                    count += 1
                for cls, when in getattr(obj, _MODULE_MARK, []) or []:
                    self.add_module_export(backend, cls, obj, when=when)
                    count += 1
        return count

    def load(self, backend: str | None = None) -> None:
        """Discover the lazily registered primitive packages of ``backend`` (of every backend: None)."""
        names = [backend] if backend is not None else list(self._pending)
        if not any(self._pending.get(b) for b in names):
            return
        with self._load_lock:
            for b in names:
                while self._pending.get(b):
                    package = self._pending[b][0]
                    self.discover(package, backend=b)
                    self._pending[b].pop(0)

    def is_loaded(self, backend: str) -> bool:
        """Whether every primitive package of ``backend`` has been imported."""
        return not self._pending.get(backend)

    # -- queries -------------------------------------------------------------------------
    def imports(self, backend: str | None = None) -> list[ImportPrimitive]:
        """Registered import primitives (of one backend, or all), sorted by op."""
        self.load(backend)
        tables = [self._imports.get(backend, {})] if backend else list(self._imports.values())
        return sorted(
            (p for t in tables for p in t.values()),
            key=lambda p: (p.backend, p.domain, p.op_type, p.since),
        )

    def exports(self, backend: str | None = None) -> list[ExportPrimitive]:
        """Registered export primitives (of one backend, or all), sorted by target."""
        self.load(backend)
        tables = [self._exports.get(backend, {})] if backend else list(self._exports.values())
        return sorted((p for t in tables for p in t.values()), key=lambda p: (p.backend, p.target))

    def module_exports(self, backend: str) -> list[ModuleExportPrimitive]:
        """Registered module export primitives of one backend, sorted by class."""
        self.load(backend)
        return sorted(self._modules.get(backend, {}).values(), key=lambda p: p.key)

    def find_module_export(self, backend: str, cls: type) -> ModuleExportPrimitive | None:
        """The module export primitive for modules of exactly class ``cls``."""
        self.load(backend)
        return self._modules.get(backend, {}).get(_class_key(cls))

    def find_export(self, backend: str, target: str) -> ExportPrimitive | None:
        self.load(backend)
        return self._exports.get(backend, {}).get(target)

    def find_import(
        self, backend: str, domain: str, op_type: str, version: int
    ) -> ImportPrimitive | None:
        """The primitive with the greatest ``since`` not above ``version``."""
        self.load(backend)
        key = (backend, domain, op_type, version)
        if key in self._found:
            return self._found[key]
        table = self._imports.get(backend, {})
        best: ImportPrimitive | None = None
        for (d, op, since), prim in table.items():
            if d == domain and op == op_type and since <= version:
                if best is None or since > best.since:
                    best = prim
        self._found[key] = best
        return best

    def adapter(self, domain: str, op_type: str, from_version: int) -> Adapter | None:
        return self._adapters.get((domain, op_type, from_version))

    def down_adapters(self, op_type: str | None = None) -> list[DownAdapter]:
        """Registered down-adapters (of one op, in registration order; or all)."""
        if op_type is not None:
            return list(self._down.get(op_type, ()))
        return [r for op in sorted(self._down) for r in self._down[op]]

    def adapters(self) -> list[Adapter]:
        return sorted(self._adapters.values(), key=lambda a: (a.domain, a.op_type, a.from_version))

    def backends_supporting(self, domain: str, op_type: str, version: int, *,
                            load: bool = True) -> list[str]:
        """The backends with an import primitive for the op; ``load=False`` asks only the loaded ones."""
        if load:
            self.load()
        names = [b for b in self._imports if load or self.is_loaded(b)]
        return sorted(b for b in names if self.find_import(b, domain, op_type, version))

    def unloaded_backends(self) -> list[str]:
        """Installed backends whose primitive packages have not been imported yet."""
        return sorted(b for b in self._pending if self._pending[b])


#: What a plugin's ``onnxport_register`` hook receives.
Registrar = Registry


#: domains whose ops ``onnx.defs`` defines: registrations there are checked against the spec
STANDARD_DOMAINS = frozenset({"", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training"})


def _check_defined(op_type: str, since: int, domain: str, fn: Callable, extension: bool = False) -> None:
    """Raise unless ``onnx.defs`` defines a standard-domain op at ``since`` (custom domains pass);
    an ``extension`` must be an op that ``onnx.defs`` does not define."""
    if domain in STANDARD_DOMAINS:
        vs = _spec.versions(op_type, domain)
        if extension:
            if vs:
                raise RegistryError(
                    f"{_source(fn)} registers {domain or 'ai.onnx'}::{op_type} as an extension, but ONNX "
                    f"defines it (versions {list(vs)}): register it without extension=True{_plugin(fn)}"
                )
            return
        if not vs:
            raise RegistryError(
                f"{_source(fn)} registers {domain or 'ai.onnx'}::{op_type}, which onnx.defs does not "
                f"define (a custom op needs its own domain; a runtime's addition to this domain that files use "
                f"is registered with extension=True){_plugin(fn)}"
            )
        if since not in vs:
            raise RegistryError(
                f"{_source(fn)} registers {op_type} since {since}, but ONNX defines it at "
                f"versions {list(vs)}{_plugin(fn)}"
            )


def _class_key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _package(fn: Callable) -> str:
    return (getattr(fn, "__module__", None) or "?").split(".")[0]


def _plugin(fn: Callable) -> str:
    return f" (plugin package {_package(fn)})"


def _source(fn: Callable) -> str:
    mod = getattr(fn, "__module__", "?")
    return f"{mod}.{getattr(fn, '__qualname__', repr(fn))}"
