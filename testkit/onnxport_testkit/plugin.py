"""The pytest plugin: one test per (backend, primitive, case), generated at collection time.

Test functions that ask for ``onnx_node_case`` or ``onnx_random_case`` are parametrized over
every installed backend and every case whose ops that backend registers. Import them with
``from onnxport_testkit.generated import *`` in any test module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

_RESULTS: list[dict[str, Any]] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("onnxport", "onnxport testkit")
    group.addoption("--onnxport-backend", action="append", default=[],
                    help="only generate tests for this backend (repeatable)")
    group.addoption("--onnxport-op", action="append", default=[],
                    help="only generate tests for cases that use this ONNX op (repeatable)")
    group.addoption("--onnxport-report", default=None,
                    help="write the generated tests' results as JSON to this path (for `onnxport coverage`)")
    group.addoption("--onnxport-no-random", action="store_true",
                    help="skip the random-input and float64 variants")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "onnxport_case(backend, case): a generated onnxport test")


def _backends(config: pytest.Config) -> list[str]:
    import onnxport

    chosen = config.getoption("--onnxport-backend") or onnxport.backends()
    missing = [b for b in chosen if b not in onnxport.backends()]
    if missing:
        raise pytest.UsageError(f"backend(s) {missing} not installed; installed: {onnxport.backends()}")
    return list(chosen)


def _selected_cases(config: pytest.Config):
    from .cases import node_cases

    ops = set(config.getoption("--onnxport-op"))
    cases = node_cases()
    if ops:
        cases = tuple(c for c in cases if any(op in ops for _, op in c.ops))
    return cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    from .runner import random_variants

    if "onnx_node_case" in metafunc.fixturenames:
        params = []
        for backend in _backends(metafunc.config):
            for case in _selected_cases(metafunc.config):
                params.append(pytest.param((backend, case), id=f"{backend}-{case.name}"))
        metafunc.parametrize("onnx_node_case", params)
    if "onnx_random_case" in metafunc.fixturenames:
        params = []
        if not metafunc.config.getoption("--onnxport-no-random"):
            for backend in _backends(metafunc.config):
                for case in _selected_cases(metafunc.config):
                    for variant in random_variants(case):
                        params.append(pytest.param((backend, case, variant), id=f"{backend}-{case.name}-{variant}"))
        metafunc.parametrize("onnx_random_case", params)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    callspec = getattr(item, "callspec", None)
    info = None
    if callspec is not None:
        for key in ("onnx_node_case", "onnx_random_case"):
            if key in callspec.params:
                p = callspec.params[key]
                info = {"kind": "node" if key == "onnx_node_case" else "random", "backend": p[0],
                        "case": p[1].name, "ops": [op for _, op in p[1].ops], "opset": p[1].opset,
                        "variant": p[2] if len(p) > 2 else None, "direction": "import"}
    info = info or getattr(item, "_onnxport_info", None)
    if info is not None:
        report.user_properties.append(("onnxport", info))
    return report


def pytest_runtest_logreport(report) -> None:
    """Collect results (also from xdist workers: user_properties travel with the report)."""
    info = dict(report.user_properties).get("onnxport")
    if info is None:
        return
    if not (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
        return
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    reason = ""
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
    elif report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        reason = (crash.message if crash is not None else str(report.longrepr))[:300]
    _RESULTS.append({**info, "outcome": outcome, "reason": reason})


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    if not _RESULTS:
        return
    by_backend: dict[tuple[str, str], dict[str, int]] = {}
    for r in _RESULTS:
        counts = by_backend.setdefault((r["backend"], r["kind"]), {})
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    terminalreporter.section("onnxport testkit")
    for (backend, kind), counts in sorted(by_backend.items()):
        total = sum(counts.values())
        passed = counts.get("passed", 0)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        terminalreporter.write_line(
            f"{backend:12s} {kind:7s} cases: {passed}/{total} passed ({100.0 * passed / max(total, 1):.1f}%) [{detail}]"
        )
    path = config.getoption("--onnxport-report")
    if path:
        import onnx

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps({"onnx": onnx.__version__, "results": _RESULTS}, indent=1))
        terminalreporter.write_line(f"testkit report written to {path}")
