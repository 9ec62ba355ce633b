"""No reviewed list holds a failure that depends on the machine: every backend's expected failures,
the testkit's edge failures, adapter-case and exchange reasons and the admitted skips name no CPU
feature, kernel library or switch, "measured on" condition or kernel choice."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from onnxport_testkit import adapter_cases, edge, exchange, skips
from onnxport_testkit.meta import expected_failure_problems, machine_condition_problems, machine_conditions

ROOT = Path(__file__).resolve().parents[2]
BACKEND_LISTS = sorted(ROOT.glob("backends/*/onnxport_*/expected_failures.py"))


def _backend_list(path: Path) -> dict[str, str]:
    """A backend's EXPECTED_FAILURES, read from its file (the backend's framework need not be installed)."""
    spec = importlib.util.spec_from_file_location(f"_xfail_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXPECTED_FAILURES


def every_list() -> dict[str, dict[str, str]]:
    """Every reviewed list of the repository whose entries carry a reason, by where it lives."""
    lists = {str(p.relative_to(ROOT)): _backend_list(p) for p in BACKEND_LISTS}
    lists.update({f"onnxport_testkit.edge.EDGE_FAILURES[{b}]": t for b, t in edge.EDGE_FAILURES.items()})
    lists["onnxport_testkit.adapter_cases (ort_differs)"] = {
        c.name: c.ort_differs for c in adapter_cases.ADAPTER_CASES + adapter_cases.DOWN_CASES if c.ort_differs}
    lists["onnxport_testkit.exchange.NOT_EXPORTABLE"] = {f"{s}:{m}": r for (s, m), r in exchange.NOT_EXPORTABLE.items()}
    allowed = skips.load_allowlist(ROOT / "tests" / "allowed_skips.txt")
    lists["tests/allowed_skips.txt"] = {a.match: a.why for a in allowed}
    return lists


def test_the_three_backend_lists_are_found() -> None:
    assert {p.parent.name for p in BACKEND_LISTS} == {"onnxport_torch", "onnxport_jax", "onnxport_tensorflow"}


def test_no_list_names_a_machine_condition() -> None:
    problems = [p for where, table in every_list().items() for p in machine_condition_problems(table, f"{where}: ")]
    assert not problems, "\n  ".join(["reasons that hold on some machines only:", *problems])


def test_a_machine_dependent_entry_in_a_list_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(edge.EDGE_FAILURES, "torch", {
        "test_gelu_default_1[nonfinite]": "[mismatch] torch's F.gelu(+inf) is NaN (torch 2.13 CPU, measured)"})
    problems = [p for where, table in every_list().items() for p in machine_condition_problems(table, f"{where}: ")]
    assert len(problems) == 1 and "EDGE_FAILURES[torch]" in problems[0] and "'measured'" in problems[0]


def test_the_backend_meta_check_refuses_a_machine_condition() -> None:
    table = {"test_abs": "[mismatch] on CPUs without AVX-512 torch takes another vector kernel"}
    problems = expected_failure_problems(table, {"test_abs"}, {})
    assert len(problems) == 1 and "AVX-512".lower() in problems[0] and "every machine" in problems[0]
    assert not expected_failure_problems({"test_abs": "[mismatch] numpy's random draws"}, {"test_abs"}, {})


@pytest.mark.parametrize("reason", [
    "[mismatch] torch's F.gelu(+inf) is NaN (torch 2.13 CPU, measured); onnxruntime gives +inf",
    "[mismatch] torch.sign(NaN) is 0 (torch 2.13 CPU, measured)",
    "[mismatch] with AVX-512 the kernel rounds differently",
    "[mismatch] the avx512f path",
    "[mismatch] AVX2 FMA contraction",
    "[mismatch] only where SSE4.2 is all there is",
    "[mismatch] the NEON kernel",
    "[mismatch] oneDNN's convolution pads differently",
    "[mismatch] MKL's gemm",
    "[mismatch] fails on this machine",
    "[mismatch] measured on the CI box",
    "[mismatch] on some CPUs the result is NaN",
    "[mismatch] torch picks another vector kernel",
    "[mismatch] depends on which kernel is selected",
    "[mismatch] TF_ENABLE_ONEDNN_OPTS=1 only",
    "[mismatch] ATEN_CPU_CAPABILITY=default gives inf",
    "[mismatch] XLA_FLAGS=--xla_cpu_max_isa=SSE4_2 gives inf",
    "[mismatch] on Intel processors",
    "[mismatch] flaky",
    "[mismatch] on older hardware",
    "[mismatch] the vectorised kernel gives NaN",
    "[mismatch] A V X 512 only",
    "[mismatch] on x86_64",
    "[mismatch] differs on newer chips",
    "[mismatch] torch's gelu (CPU build) gives NaN",
])
def test_machine_conditions_are_recognised(reason: str) -> None:
    assert machine_conditions(reason), reason


@pytest.mark.parametrize("reason", [
    "[mismatch] reference inaccuracy: onnxruntime has no float64 Gelu kernel, so onnx.reference is the reference",
    "[NotImplemented] onnxruntime's CPU execution provider has no float64 Conv kernel",
    "[mismatch] within machine epsilon of the exact value",
    "[ConversionError] not traceable: RoiAlign's import reads the box coordinates as Python floats",
    "[mismatch] expected values are numpy's random draws; jax.random draws differ (same distribution)",
    "[ModelError] the re-exported STFT graph declares 9 frequency bins where ONNX shape inference computes 16",
])
def test_reasons_that_hold_everywhere_pass(reason: str) -> None:
    assert not machine_conditions(reason), machine_conditions(reason)
