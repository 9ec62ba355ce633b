"""Running one generated case: import, run, compare; expected failures from the backend's list.

The testkit asks a backend object for (all optional except ``run`` for import tests):

- ``run(imported, inputs: list[np.ndarray]) -> list[np.ndarray]``: run an imported object;
- ``export_model(fn, example_inputs, *, opset=None, **options) -> onnx_ir.Model``: trace and export;
- ``run_native(fn, args, kwargs) -> list[np.ndarray]``: the framework's own outputs of ``fn``
  (default: call ``fn`` and flatten its outputs);
- ``to_numpy(x) -> np.ndarray`` / ``from_numpy(a)``: framework tensor <-> numpy (default
  ``np.asarray`` / no round trip of node cases; without ``from_numpy`` export samples are not
  re-run at a larger batch);
- ``prepare_export_sample(sample, target=None) -> (sample, options)``: the sample as the framework
  exports it (a torch module in eval mode) and extra export options (``dynamic_shapes`` with a
  symbolic dim 0; the torch backend: whether to decompose, so that ``target``, the primitive's
  op, is the one traced; a hook without a ``target`` parameter is called without it); a graph input left with a symbolic dim 0 is then also checked at a larger batch;
- ``check_exported_sample(prim, sample, model)``: framework-specific checks of an exported sample
  (the torch backend: the primitive's own op was traced); raises AssertionError;
- ``check_roundtrip(sample, imported)``: framework-specific checks of import(export(sample))
  (the torch backend: the parameter names came back); raises AssertionError;
- ``expected_failures: dict[str, str]``: reviewed exact names -> ``"[how] reason"`` (see
  :func:`failure_key`); ``how`` is ``mismatch`` (outputs differ) or the exact name of the exception
  class the case raises; a listed case failing any other way fails the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest

from onnxport.plugin.backend import export_part
from onnxport.plugin.testkit_support import testkit_part

from .cases import NodeCase
from .compare import Mismatch, compare_outputs, declared_tolerances
from .failures import expected_failure, failure_key, failure_table  # noqa: F401  (re-exported)
from .semantic_cases import cases_of

#: an expected failure's reason: ``[mismatch] why`` or ``[ExceptionClassName] why``
_HOW = re.compile(r"^\[(?P<how>[A-Za-z_][A-Za-z0-9_]*)\]\s+(?P<why>\S.*)$", re.S)


def failure_mode(reason: str) -> tuple[str | None, str]:
    """``(how, why)`` of an expected failure's reason; ``how`` is None when the reason lacks it."""
    m = _HOW.match(reason)
    return (m.group("how"), m.group("why")) if m else (None, reason)


def failed_how(exc: BaseException) -> str:
    """``mismatch`` for differing outputs, else the exception's class name."""
    return "mismatch" if isinstance(exc, Mismatch) else type(exc).__name__


def backend_object(name: str) -> Any:
    import onnxport

    return onnxport.get_backend(name)


def missing_ops(backend_name: str, ops: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> list[str]:
    """Ops (``domain::op`` for custom domains) that ``backend_name`` has no primitive for."""
    import onnxport
    from onnxport.plugin.spec import latest_version

    reg = onnxport.registry()
    out = []
    for domain, op in ops:
        try:
            version = latest_version(op, domain)
        except Exception:  # noqa: BLE001 - an op onnx.defs does not know: any since will do
            version = 10**6
        # an adapter from the newest version rewrites a deprecated op (Scatter) into another op
        if reg.find_import(backend_name, domain, op, version) is None and reg.adapter(domain, op, version) is None:
            out.append(f"{domain}::{op}" if domain else op)
    return sorted(set(out))


def run_backend(backend_name: str, model: onnx.ModelProto, inputs: list[Any]) -> list[Any]:
    """Import ``model`` into the backend and run it on numpy inputs."""
    import onnxport

    backend = backend_object(backend_name)
    imported = onnxport.import_model(model, backend=backend_name)
    return list(backend.run(imported, inputs))


def check(backend_name: str, name: str, variant: str | None, fn: Callable[[], None],
          ops: tuple[tuple[str, str], ...] = ()) -> None:
    """Run ``fn`` under the expected-failure list: a listed case must fail, an unlisted one pass."""
    backend = backend_object(backend_name)
    reason = expected_failure(backend, name, variant)
    missing = missing_ops(backend_name, ops) if ops else []
    if missing and reason is None:
        pytest.skip(f"not registered in {backend_name}: {', '.join(missing)}")
    try:
        fn()
    except pytest.skip.Exception:
        raise
    except Exception as exc:
        if reason is not None:
            how, why = failure_mode(reason)
            got = failed_how(exc)
            if how == got:
                pytest.xfail(reason)
            raise AssertionError(f"{name}: listed as failing with [{how}] ({why[:120]}), but it failed with "
                                 f"[{got}]: {str(exc)[:500]}") from exc
        if isinstance(exc, AssertionError):
            raise
        raise AssertionError(f"{name}: {type(exc).__name__}: {exc}") from exc
    if reason is not None:
        key = failure_key(name, variant) if variant and failure_key(name, variant) in failure_table(backend) else name
        pytest.fail(f"{key} passes but is listed as an expected failure ({reason!r}): remove it from the list")


def import_tolerances(backend_name: str, ops: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> dict[str, Any]:
    """Tolerances declared beside the newest import primitives of ``ops`` (``TEST_TOLERANCES``)."""
    import onnxport

    reg = onnxport.registry()
    found = [(reg.find_import(backend_name, d, op, 10**6), op) for d, op in ops]
    return declared_tolerances([(p.fn, op) for p, op in found if p is not None])


def export_tolerances(prim: Any) -> dict[str, Any]:
    """Tolerances declared beside an export primitive, keyed by its target."""
    return declared_tolerances([(prim.fn, prim.target)])


def _compare_all(names: list[str], expected: list[Any], actual: list[Any], **tol: Any) -> None:
    if len(actual) != len(expected):
        raise Mismatch(f"{len(actual)} outputs, expected {len(expected)}")
    for name, e, a in zip(names, expected, actual):
        compare_outputs(e, a, name=name, **tol)


# -- node cases and their variants ---------------------------------------------------------------
def run_node_case(backend_name: str, case: NodeCase, variant: str | None = None) -> None:
    """The official case (or its ``dynbatch`` / ``opsetN`` variant, or one of the backend's own
    :meth:`~onnxport.plugin.backend.Backend.case_variants`): expected outputs come with the case."""
    from . import variants as V

    def go() -> None:
        inputs, expected = case.data()
        source = "case"
        if variant is None:
            model = case.model
        elif variant == "dynbatch":
            model = V.dynamic_batch_model(case)
        elif variant.startswith("opset"):
            # the converted model is its own reference: the converter may keep a node whose
            # meaning changed between versions, and the core's adapters must follow ONNX
            from .reference import ReferenceUnavailable, run_reference

            try:
                model = V.older_opset_model(case, int(variant[5:]))
                with np.errstate(all="ignore"):
                    expected, source = run_reference(model, inputs)
            except (V.ConversionUnavailable, ReferenceUnavailable) as exc:
                pytest.skip(str(exc)[:300])
        else:  # the backend's own variant: the case's model, called as the variant says
            import onnxport

            backend = backend_object(backend_name)
            if variant not in testkit_part(backend).case_variants(case.model):
                raise ValueError(f"unknown node-case variant {variant!r}")
            imported = onnxport.import_model(case.model, backend=backend_name,
                                             **testkit_part(backend).variant_import_options(variant))
            actual = testkit_part(backend).run_variant(variant, imported, inputs)
            compare_with_reference(case.model, inputs, expected, source, actual,
                                   import_tolerances(backend_name, case.ops))
            return
        actual = run_backend(backend_name, model, inputs)
        compare_with_reference(model, inputs, expected, source, actual, import_tolerances(backend_name, case.ops))

    check(backend_name, case.name, variant, go, case.ops)


def compare_with_reference(model, inputs, expected, source: str, actual, overrides=None) -> None:
    """Compare with a runtime's outputs; a mismatch with onnxruntime gets onnx.reference's opinion."""
    names = [o.name for o in model.graph.output]
    try:
        _compare_all(names, expected, actual, overrides=overrides)
    except AssertionError as mismatch:
        if source != "onnxruntime":
            raise
        second_opinion(names, model, inputs, expected, actual, mismatch, overrides)


def second_opinion(names, model, inputs, ort_out, actual, ort_mismatch: AssertionError, overrides=None) -> None:
    """Accept a mismatch with onnxruntime only when onnx.reference sides with the backend.

    onnxruntime computes some float64/float16 kernels (Attention, GroupNormalization, GridSample)
    in another precision. When the spec's reference evaluator agrees with the backend within the
    dtype's tolerance AND disagrees with onnxruntime, the backend is right; otherwise the original
    mismatch stands.
    """
    from .reference import run_onnx_reference

    try:
        ref_out = run_onnx_reference(model, inputs)
    except Exception:  # noqa: BLE001 - no second opinion available
        raise ort_mismatch from None
    try:
        _compare_all(names, ref_out, actual, overrides=overrides)
    except AssertionError:
        raise ort_mismatch from None
    try:
        _compare_all(names, ref_out, ort_out, overrides=overrides)
    except AssertionError:
        return  # onnxruntime is the odd one out
    raise ort_mismatch


def run_random_case(backend_name: str, case: NodeCase, variant: str) -> None:
    """Random inputs drawn for the case's shapes in the variant's dtype, vs onnxruntime."""
    from .reference import ReferenceUnavailable, run_reference
    from .variants import random_model

    model, inputs = random_model(case, variant)
    try:
        with np.errstate(all="ignore"):
            expected, source = run_reference(model, inputs)
    except ReferenceUnavailable as exc:
        pytest.skip(f"no reference runtime runs this variant: {str(exc)[:200]}")

    def go() -> None:
        actual = run_backend(backend_name, model, inputs)
        compare_with_reference(model, inputs, expected, source, actual, import_tolerances(backend_name, case.ops))

    check(backend_name, case.name, variant, go, case.ops)


def run_edge_case(backend_name: str, case: NodeCase, variant: str) -> None:
    """An edge-value variant (onnxport_testkit.edge) vs onnxruntime; NaN equals NaN."""
    from .edge import edge_model, expected_edge_failure
    from .reference import run_reference

    backend = backend_object(backend_name)
    model, inputs = edge_model(case, variant)
    with np.errstate(all="ignore"):
        expected, source = run_reference(model, inputs)
    reason = expected_edge_failure(backend, case, variant)
    name = f"{case.name}[{variant}]"
    try:
        with np.errstate(all="ignore"):
            actual = run_backend(backend_name, model, inputs)
            compare_with_reference(model, inputs, expected, source, actual,
                                   import_tolerances(backend_name, case.ops))
    except Exception as exc:
        if reason is None:
            if isinstance(exc, AssertionError):
                raise
            raise AssertionError(f"{name}: {type(exc).__name__}: {exc}") from exc
        how, why = failure_mode(reason)
        if how == failed_how(exc):
            pytest.xfail(reason)
        raise AssertionError(f"{name}: listed as failing with [{how}] ({why[:120]}), but it failed with "
                             f"[{failed_how(exc)}]: {str(exc)[:500]}") from exc
    if reason is not None:
        pytest.fail(f"{name} passes but is listed as an expected failure ({reason!r}): remove it from the list")


# -- declared import cases -----------------------------------------------------------------------
def import_case_model(prim: Any, case: Any) -> onnx.ModelProto:
    """A one-node model for a declared :class:`onnxport.ImportCase` of an import primitive."""
    from onnx import helper

    names_in = [f"input_{i}" if x is not None else "" for i, x in enumerate(case.inputs)]
    names_out = [f"output_{i}" for i in range(case.num_outputs)]
    node = helper.make_node(prim.op_type, names_in, names_out, name=case.name or prim.op_type,
                            domain=prim.domain, **case.attributes)
    graph_inputs = [
        helper.make_tensor_sequence_value_info(  # a list input is a sequence of tensors
            n, helper.np_dtype_to_tensor_dtype(np.asarray(x[0] if x else np.float32(0)).dtype), None)
        if isinstance(x, list) else
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.asarray(x).dtype), np.asarray(x).shape)
        for n, x in zip(names_in, case.inputs) if x is not None
    ]
    graph_outputs = [helper.make_value_info(n, onnx.TypeProto()) for n in names_out]
    graph = helper.make_graph([node], f"{prim.op_type}_case", graph_inputs, graph_outputs)
    imports = [helper.make_opsetid("", onnx.defs.onnx_opset_version())]
    if prim.domain:
        imports.append(helper.make_opsetid(prim.domain, prim.since))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = min(model.ir_version, 10)
    return model


def run_import_case(backend_name: str, prim: Any, index: int) -> None:
    """A declared case of an import primitive: expected outputs, a numpy reference or onnxruntime."""
    case = cases_of(prim)[index]
    model = import_case_model(prim, case)
    inputs = [x if isinstance(x, list) else np.asarray(x) for x in case.inputs if x is not None]
    name = f"{prim.domain + '::' if prim.domain else ''}{prim.op_type}[{case.name or index}]"

    def go() -> None:
        if case.expected is not None:
            expected = [e if isinstance(e, list) else np.asarray(e) for e in case.expected]
        elif case.reference is not None:
            out = case.reference(*case.inputs, **case.attributes)
            expected = list(out) if isinstance(out, (tuple, list)) else [out]
        else:
            from .reference import run_reference

            with np.errstate(all="ignore"):
                expected, _ = run_reference(model, inputs)
        actual = run_backend(backend_name, model, inputs)
        _compare_all([o.name for o in model.graph.output], expected, actual, rtol=case.rtol, atol=case.atol,
                     overrides=import_tolerances(backend_name, [(prim.domain, prim.op_type)]))

    check(backend_name, name, None, go)


# -- export samples and round trips ---------------------------------------------------------------
def _to_numpy(backend: Any, x: Any) -> Any:
    return backend.to_numpy(x)


def _flatten(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in _flatten(o)]
    if isinstance(out, dict):
        return [y for o in out.values() for y in _flatten(o)]
    return [out]


def emitted_ops(model: onnx.ModelProto) -> list[str]:
    """Op types of every node of an exported model, subgraphs included, sorted."""
    from .cases import _ops

    return sorted({op for _, op in _ops(model.graph)})


def _prepared(backend: Any, sample: Any, target: str | None = None) -> tuple[Any, dict[str, Any]]:
    return testkit_part(backend).prepare_export_sample(sample, target)


def export_sample(backend_name: str, sample: Any, opset: int | None = None) -> tuple[onnx.ModelProto, list[Any]]:
    """Trace and export a sample through the backend; the checked ModelProto and its numpy inputs."""
    proto, inputs, _, _ = _export_sample(backend_name, sample, opset)
    return proto, inputs


def _export_sample(
    backend_name: str, sample: Any, opset: int | None = None, target: str | None = None
) -> tuple[onnx.ModelProto, list[Any], Any, Any]:
    """:func:`export_sample`, plus the exported model as the backend returned it and the prepared sample."""
    import onnx_ir as ir

    backend = backend_object(backend_name)
    exp = export_part(backend)
    if exp is None:
        pytest.skip(f"backend {backend_name!r} has no exporter")
    sample, extra = _prepared(backend, sample, target)
    options: dict[str, Any] = {"opset": opset, **extra}
    if sample.kwargs:
        options["example_kwargs"] = dict(sample.kwargs)
    model = exp.export_model(sample.fn, tuple(sample.args), **options)
    proto = ir.serde.serialize_model(model) if isinstance(model, ir.Model) else model
    onnx.checker.check_model(proto, full_check=True)
    inputs = [_to_numpy(backend, a) for a in sample.args]
    return proto, inputs, model, sample


def native_outputs(backend_name: str, sample: Any, args: tuple[Any, ...] | None = None) -> list[Any]:
    """The framework's own outputs of a sample (or of its callable on other ``args``), as numpy."""
    backend = backend_object(backend_name)
    args = tuple(sample.args) if args is None else args
    exp = export_part(backend)
    outs = exp.run_native(sample.fn, args, dict(sample.kwargs)) if exp is not None else None
    if outs is not None:
        return list(outs)
    # default: call the framework callable, flatten its outputs in order
    return [_to_numpy(backend, o) for o in _flatten(sample.fn(*args, **sample.kwargs))]


def sample_name(target: str, index: int, sample: Any) -> str:
    return f"export:{target}[{sample.name or index}]"


def _seeded(backend_name: str, name: str, fn: Callable[[], None]) -> Callable[[], None]:
    """``fn`` run in the backend's random state seeded by the sample's name (what a sample draws
    while it runs, such as a layer's weights built on its first call, is the same on every run, in
    any test order and any worker)."""
    import onnxport

    def go() -> None:
        with onnxport.registry().seeded(backend_name, name):
            fn()

    return go


def _symbolic_batch(proto: onnx.ModelProto) -> list[bool]:
    """Per graph input: whether the exported graph left its dim 0 symbolic."""
    out = []
    for v in proto.graph.input:
        dims = v.type.tensor_type.shape.dim if v.type.HasField("tensor_type") else []
        out.append(bool(dims) and not dims[0].HasField("dim_value"))
    return out


def run_exported(backend_name: str, sample: Any, proto: onnx.ModelProto, inputs: list[Any],
                 fallback: bool = False) -> list[Any]:
    """Outputs of an exported sample's graph: onnxruntime by default; onnx.reference with the sample's
    numpy ``reference`` for its custom-domain ops; or, with ``runner="import"``, the graph imported
    back into the backend (its own import primitives run the custom ops)."""
    from .reference import run_onnxruntime, run_with_custom_ops

    if getattr(sample, "runner", "onnxruntime") == "import":
        import onnxport

        imported = onnxport.import_model(proto, backend=backend_name)
        return list(backend_object(backend_name).run(imported, inputs))
    if getattr(sample, "reference", None) is not None:
        return run_with_custom_ops(proto, inputs, sample.reference)
    if fallback:  # another opset: onnx.reference where onnxruntime has no kernel of that version
        from .reference import run_reference

        return run_reference(proto, inputs)[0]
    return run_onnxruntime(proto, inputs)


def export_opsets() -> tuple[int, ...]:
    """The opsets besides the default that every export sample also runs at: the lowest the
    exporters support and the newest onnx knows."""
    from onnxport.exporting.pipeline import DEFAULT_OPSET, MIN_OPSET
    from onnxport.plugin import spec

    return tuple(o for o in dict.fromkeys((MIN_OPSET, spec.latest_opset())) if o != DEFAULT_OPSET)


def sample_opsets(prim: Any, sample: Any, every: bool = False) -> tuple[int, ...]:
    """The opsets of :func:`export_opsets` where the sample's export can differ from the default's:
    its primitive branches on the opset (its source mentions ``opset``), or an op it emits
    (``sample.emits``) has another schema version there or a down-adapter that applies there.
    ``every``: all of them (``--onnxport-all-opsets``)."""
    import inspect

    import onnxport
    from onnxport.exporting.pipeline import DEFAULT_OPSET
    from onnxport.plugin import spec

    if every:
        return export_opsets()
    try:
        branches = "opset" in inspect.getsource(prim.fn)
    except (OSError, TypeError):
        branches = True
    if branches:
        return export_opsets()
    reg = onnxport.registry()
    out = []
    for opset in export_opsets():
        for op in sample.emits:
            here = spec.get_spec(op, opset).since_version if spec.has_spec(op, opset) else None
            default = spec.get_spec(op, DEFAULT_OPSET).since_version if spec.has_spec(op, DEFAULT_OPSET) else None
            if here != default or any(opset < d.below for d in reg.down_adapters(op)):
                out.append(opset)
                break
    return tuple(out)


def _refusal_justified(backend_name: str, sample: Any, target: str, opset: int, message: str) -> list[str]:
    """What makes refusing ``opset`` right (empty: the refusal is a bug): the ops of the sample's
    default-opset export that ``opset`` lacks with no down-adapter writing them with older ops, or
    (when the refusal names an opset) that have a newer form at the default opset than at ``opset``
    (an attribute or input the old form lacks, as Reshape's allowzero before 14)."""
    import onnxport
    from onnxport.exporting.pipeline import DEFAULT_OPSET
    from onnxport.plugin import spec

    proto, _, _, _ = _export_sample(backend_name, sample, target=target)
    reg = onnxport.registry()
    names_opset = re.search(r"opset \d+", message) is not None
    lacking = []
    for op in emitted_ops(proto):
        domain, _, name = op.rpartition("::")
        if domain or not spec.versions(name):
            continue
        if not spec.has_spec(name, opset):
            if not any(opset < d.below for d in reg.down_adapters(name)):
                lacking.append(f"{name} (from opset {spec.versions(name)[0]})")
        elif names_opset and spec.get_spec(name, opset).since_version < spec.get_spec(name, DEFAULT_OPSET).since_version:
            lacking.append(f"{name}-{spec.get_spec(name, DEFAULT_OPSET).since_version} (opset {opset} has "
                           f"{name}-{spec.get_spec(name, opset).since_version})")
    return lacking


def run_export_sample(backend_name: str, prim: Any, index: int, extra: dict[str, Any],
                      opset: int | None = None) -> None:
    """Trace a declared sample, ``onnx.checker`` it, run it in onnxruntime, compare, check op types.

    Where the exported graph kept dim 0 of an input symbolic, the sample is also run with one
    more row on that dim (a copy of row 0, so index inputs stay in range). With ``opset`` (another
    than the default), the sample is exported at that opset; a :class:`ConversionError` there
    passes only when the spec justifies it (:func:`_refusal_justified`).
    """
    backend = backend_object(backend_name)
    sample = prim.samples[index]
    name = sample_name(prim.target, index, sample)

    def go() -> None:
        if opset is None:
            proto, inputs, model, ready = _export_sample(backend_name, sample, target=prim.target)
        else:
            from onnxport.errors import ConversionError

            try:
                proto, inputs, model, ready = _export_sample(backend_name, sample, opset, target=prim.target)
            except ConversionError as exc:
                lacking = _refusal_justified(backend_name, sample, prim.target, opset, str(exc))
                if not lacking:
                    raise AssertionError(f"{name}: export at opset {opset} refused although every op of the "
                                         f"default export exists there: {exc}") from exc
                extra["refused"] = f"opset {opset} lacks {lacking}"
                return
            got = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
            assert got == opset, f"{name}: exported at opset {got}, asked {opset}"
        ops = emitted_ops(proto)
        extra["emitted"] = ops
        extra["opset"] = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
        # ``emits`` describes the default opset (another opset may write the op with older ops)
        missing = [op for op in sample.emits if op not in ops] if opset is None else []
        assert not missing, f"{name}: the exported graph lacks {missing}; it has {ops}"
        testkit_part(backend).check_exported_sample(prim, ready, model)
        names = [o.name for o in proto.graph.output]
        expected = native_outputs(backend_name, ready)
        actual = run_exported(backend_name, sample, proto, inputs, fallback=opset is not None)
        tol = export_tolerances(prim)
        _compare_all(names, expected, actual, rtol=sample.rtol, atol=sample.atol, overrides=tol)
        grow = _symbolic_batch(proto)
        if any(grow) and backend.supports("from_numpy"):
            if len(grow) != len(inputs):
                raise AssertionError(f"{name}: {len(grow)} graph inputs for {len(inputs)} example inputs")
            bigger = [np.concatenate([x, x[:1]], 0) if g else x for x, g in zip(inputs, grow)]
            args = tuple(backend.from_numpy(x) for x in bigger)
            expected = native_outputs(backend_name, ready, args)
            actual = run_exported(backend_name, sample, proto, bigger, fallback=opset is not None)
            _compare_all([f"{n} (dim 0 grown)" for n in names], expected, actual, rtol=sample.rtol, atol=sample.atol,
                         overrides=tol)

    variant = str(sample.name or index) + ("" if opset is None else f"-opset{opset}")
    check(backend_name, f"export:{prim.target}", variant, _seeded(backend_name, name, go))


def run_sample_roundtrip(backend_name: str, prim: Any, index: int) -> None:
    """import(export(sample)) in the same backend gives the framework's own outputs.

    A backend with ``check_roundtrip(sample, imported)`` checks more of the imported object
    (the torch backend: the parameter names).
    """
    import onnxport

    backend = backend_object(backend_name)
    sample = prim.samples[index]

    def go() -> None:
        proto, inputs, _, ready = _export_sample(backend_name, sample, target=prim.target)
        expected = native_outputs(backend_name, ready)
        missing = missing_ops(backend_name, [(n.domain, n.op_type) for n in proto.graph.node])
        if missing:  # the backend exports this sample but cannot import all it emits yet
            pytest.skip(f"not registered in {backend_name}: {', '.join(missing)}")
        imported = onnxport.import_model(proto, backend=backend_name)
        actual = list(backend.run(imported, inputs))
        names = [o.name for o in proto.graph.output]
        _compare_all(names, expected, actual, rtol=sample.rtol, atol=sample.atol, overrides=export_tolerances(prim))
        # and against a runtime that is neither the exporter nor the importer: the exported graph
        # in onnxruntime (or the sample's stated reference for custom ops)
        if getattr(sample, "runner", "onnxruntime") != "import":
            independent = run_exported(backend_name, sample, proto, inputs)
            _compare_all([f"{n} (vs onnxruntime)" for n in names], independent, actual, rtol=sample.rtol,
                         atol=sample.atol, overrides=export_tolerances(prim))
        testkit_part(backend).check_roundtrip(ready, imported)

    check(backend_name, f"export:{prim.target}", f"{sample.name or index}-roundtrip",
          _seeded(backend_name, sample_name(prim.target, index, sample), go))


def fixed_inputs_model(model: onnx.ModelProto, inputs: list[Any], keep: int) -> onnx.ModelProto:
    """``model`` with its graph inputs from ``keep`` on turned into initializers holding ``inputs``."""
    from onnx import numpy_helper

    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    graph_inputs = list(fixed.graph.input)
    del fixed.graph.input[:]
    fixed.graph.input.extend(graph_inputs[:keep])
    for v, x in zip(graph_inputs[keep:], inputs[keep:]):
        fixed.graph.initializer.append(numpy_helper.from_array(np.asarray(x), v.name))
    return fixed


def run_case_roundtrip(backend_name: str, case: NodeCase) -> None:
    """export(import(case)) runs in onnxruntime and gives the case's expected outputs.

    An import may read an input's values while tracing (a Reshape's shape, a Resize's scales),
    which a tracer cannot do with that input free. When the export fails, it is retried with the
    inputs after the first fixed as initializers, then with all of them; the first error is
    reported when every try fails.
    """
    import onnx_ir as ir

    import onnxport
    from onnxport.errors import ConversionError, UnsupportedOpError

    from .reference import run_onnxruntime

    backend = backend_object(backend_name)
    if not backend.supports("from_numpy"):
        pytest.skip(f"backend {backend_name!r} has no from_numpy: node cases cannot be traced")

    def export(model: onnx.ModelProto, inputs: list[Any]) -> Any:
        imported = onnxport.import_model(model, backend=backend_name)
        args = tuple(backend.from_numpy(np.asarray(x)) for x in inputs)
        return export_part(backend).export_model(imported, args)

    def go() -> None:
        inputs, expected = case.data()
        if any(x is None or isinstance(x, list) for x in [*inputs, *expected]):
            pytest.skip("sequence or optional inputs or outputs: exported graphs take and give tensors")
        first: Exception | None = None
        for keep in (len(inputs), 1, 0)[: 3 if inputs else 1]:
            try:
                model = export(case.model if keep == len(inputs) else fixed_inputs_model(case.model, inputs, keep),
                               inputs[:keep])
                break
            except UnsupportedOpError as exc:
                pytest.skip(f"not exportable yet: {str(exc)[:200]}")
            except ConversionError as exc:
                first = first or exc
        else:
            raise first
        proto = ir.serde.serialize_model(model) if isinstance(model, ir.Model) else model
        onnx.checker.check_model(proto, full_check=True)
        actual = run_onnxruntime(proto, [np.asarray(x) for x in inputs[:keep]])
        _compare_all([o.name for o in proto.graph.output], expected, actual,
                     overrides=import_tolerances(backend_name, case.ops))

    check(backend_name, case.name, "roundtrip", go, case.ops)
