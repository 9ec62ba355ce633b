"""The generated tests. ``from onnxport_testkit.generated import *`` in a test module collects them."""

from __future__ import annotations

from typing import Any

import pytest

from .runner import (
    run_case_roundtrip,
    run_edge_case,
    run_export_sample,
    run_import_case,
    run_node_case,
    run_random_case,
    run_sample_roundtrip,
)

__all__ = [
    "test_onnx_edge_case",
    "test_onnx_export_sample",
    "test_onnx_export_sample_opset",
    "test_onnx_import_case",
    "test_onnx_node_case",
    "test_onnx_node_variant",
    "test_onnx_random_case",
    "test_onnx_roundtrip",
    "test_onnxport_backend_contract",
    "test_onnxport_backend_layout",
    "test_onnxport_expected_failures_reviewed",
    "test_onnxport_hook_documented",
    "test_onnxport_primitive_has_cases",
]


def test_onnx_node_case(onnx_node_case) -> None:
    """An official ONNX backend node case, imported and run in one backend."""
    backend, case = onnx_node_case
    run_node_case(backend, case)


def test_onnx_node_variant(onnx_node_variant) -> None:
    """A node case with a dynamic batch dimension, or converted down to an older opset."""
    backend, case, variant = onnx_node_variant
    run_node_case(backend, case, variant)


def test_onnx_random_case(onnx_random_case) -> None:
    """A node case's model on random inputs of one allowed dtype, against onnxruntime."""
    backend, case, variant = onnx_random_case
    run_random_case(backend, case, variant)


def test_onnx_edge_case(onnx_edge_case) -> None:
    """NaN/inf, zeros, an empty dimension or a negative axis in a node case, vs onnxruntime."""
    backend, case, variant = onnx_edge_case
    run_edge_case(backend, case, variant)


def test_onnx_import_case(onnx_import_case) -> None:
    """A case declared beside an import primitive (``@importer(..., cases=[ImportCase(...)])``)."""
    backend, prim, index = onnx_import_case
    run_import_case(backend, prim, index)


def test_onnx_export_sample(onnx_export_sample, request: pytest.FixtureRequest) -> None:
    """A sample declared beside an export primitive: trace, check, onnxruntime vs framework, op types."""
    backend, prim, index = onnx_export_sample
    extra: dict[str, Any] = {}
    request.node._onnxport_extra = extra
    run_export_sample(backend, prim, index, extra)


def test_onnx_export_sample_opset(onnx_export_opset, request: pytest.FixtureRequest) -> None:
    """The same sample exported at the lowest supported and the newest opset (not the default)."""
    backend, prim, index, opset = onnx_export_opset
    extra: dict[str, Any] = {}
    request.node._onnxport_extra = extra
    run_export_sample(backend, prim, index, extra, opset=opset)


def test_onnx_roundtrip(onnx_roundtrip) -> None:
    """import(export(sample)) and export(import(node case)) in a backend that does both."""
    backend, what, obj, index = onnx_roundtrip
    if what == "sample":
        run_sample_roundtrip(backend, obj, index)
    else:
        run_case_roundtrip(backend, obj)


def test_onnxport_primitive_has_cases(onnxport_primitive) -> None:
    """Meta: every registered primitive is exercised by at least one case."""
    import onnxport

    from .cases import node_cases
    from .meta import check_primitive_has_cases

    check_primitive_has_cases(onnxport_primitive, onnxport.registry(), node_cases())


def test_onnxport_hook_documented(onnxport_hook) -> None:
    """Meta: every hook of ``onnxport.plugin.hookspecs`` has a docstring documenting each argument."""
    from onnxport.plugin import hookspecs

    from .meta import hook_problems

    problems = hook_problems(hookspecs)[onnxport_hook]
    assert not problems, f"hook {onnxport_hook}: " + "; ".join(problems)


def test_onnxport_expected_failures_reviewed(onnxport_failure_list) -> None:
    """Meta: every expected failure has a reason and names a real node case or export sample."""
    import onnxport

    from .cases import node_cases
    from .meta import expected_failure_problems
    from .semantic_cases import cases_of

    reg = onnxport.registry()
    name, source = onnxport_failure_list
    if source:  # a plugin's list
        table = {k: reason for k, (reason, src) in reg.expected_failures(name).items() if src == source}
    else:
        table = reg.backends[name].expected_failures
    targets = {p.target: [str(s.name or i) for i, s in enumerate(p.samples)] for p in reg.exports(name)}
    declared = {f"{p.domain + '::' if p.domain else ''}{p.op_type}": [str(c.name or i) for i, c in enumerate(cases_of(p))]
                for p in reg.imports(name) if cases_of(p)}
    from onnxport.plugin.testkit_support import testkit_part

    variants = testkit_part(reg.backends[name]).variant_names if name in reg.backends else ()
    problems = expected_failure_problems(table, {c.name for c in node_cases()}, targets, declared, variants)
    assert not problems, f"{name} expected failures{' of ' + source if source else ''}:\n  " + "\n  ".join(problems)


def test_onnxport_backend_contract(onnxport_backend) -> None:
    """Meta: the backend meets the contract of :mod:`onnxport.plugin.backend` (named problems), and the
    optional features it claims work on a small array."""
    import numpy as np

    import onnxport
    from onnxport.plugin.backend import export_part, problems

    backend = onnxport.registry().backends[onnxport_backend]
    wrong = problems(backend, onnxport_backend)
    assert not wrong, f"backend {onnxport_backend!r} does not meet the contract:\n  " + "\n  ".join(wrong)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    if backend.supports("from_numpy"):
        back = backend.to_numpy(backend.from_numpy(x))
        assert back.dtype == x.dtype and np.array_equal(back, x), "to_numpy(from_numpy(x)) changed x"
    exp = export_part(backend)
    if exp is not None:  # the one way the exporter is chosen claims what the backend exports
        from onnxport.api import backend_for

        from .runner import sample_name

        wrong = []
        for prim in onnxport.registry().exports(onnxport_backend):
            for index, sample in enumerate(prim.samples):
                try:
                    claimed = backend_for(sample.fn, tuple(sample.args))
                except onnxport.OnnxportError as exc:
                    claimed = type(exc).__name__
                if claimed != onnxport_backend:
                    wrong.append(f"{sample_name(prim.target, index, sample)}: {claimed}")
        assert not wrong, (f"onnxport_backend_for does not give {onnxport_backend!r} for these export samples:\n  "
                           + "\n  ".join(wrong))


def test_onnxport_backend_layout(onnxport_layout) -> None:
    """Meta: an op implemented by several installed backends lives in files of the same name."""
    import onnxport

    from .meta import layout_problems

    problems = layout_problems(onnxport.registry())
    assert not problems, "op families filed differently across backends:\n  " + "\n  ".join(problems)

