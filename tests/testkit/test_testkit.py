"""The testkit tested with pytester: a fake numpy backend (import + export), meta-tests,
expected failures, a broken plugin, and the report that `onnxport coverage` reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from onnxport_testkit.cases import cache_root

pytest_plugins = ("pytester",)

FIXTURES = Path(__file__).parent / "fixtures"
GENERATED = "from onnxport_testkit.generated import *  # noqa: F403\n"


@pytest.fixture
def fresh_registry():
    """Rebuild the plugin registry before and after: the runs below change the installed plugins."""
    from onnxport.plugin import discovery as plugins

    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture
def fake_env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fresh_registry) -> pytest.Pytester:
    """A pytester folder collecting the generated tests, with only the fake backend installed.

    The runs are in-process (fast: onnx and onnxruntime stay imported); the fake backend's package
    and ``.dist-info`` are put on ``sys.path``, so its ``onnxport`` entry point is found.
    """
    monkeypatch.syspath_prepend(str(FIXTURES / "fake_backend"))
    monkeypatch.setenv("ONNXPORT_BLOCK_PLUGINS", "torch,jax,tensorflow,example,broken")
    monkeypatch.setenv("ONNXPORT_CACHE", str(cache_root()))  # pytester moves HOME; keep the case cache
    for var in ("ONNXPORT_FAKE_BROKEN", "ONNXPORT_FAKE_NOCASE", "ONNXPORT_FAKE_XFAIL"):
        monkeypatch.delenv(var, raising=False)
    pytester.makepyfile(test_gen=GENERATED)
    return pytester


def run(p: pytest.Pytester, *args: str) -> pytest.RunResult:
    from onnxport.plugin import discovery as plugins

    plugins.reset()  # the environment of this run decides which plugins register
    return p.runpytest_inprocess("-p", "no:cacheprovider", "-n", "0", "--onnxport-backend", "fake", *args)


def outcomes(result: pytest.RunResult, **expected: int) -> None:
    """Check only the named outcome counts (the others may vary with the node cases)."""
    got = result.parseoutcomes()
    for key, n in expected.items():
        assert got.get(key, 0) == n, (key, got)


def test_fake_backend_generates_and_passes(fake_env: pytest.Pytester) -> None:
    report = fake_env.path / "report.json"
    result = run(fake_env, "--onnxport-op", "Relu", "--onnxport-op", "LeakyRelu", f"--onnxport-report={report}", "-v", "-rs")
    outcomes(result, failed=0, errors=0)
    out = result.stdout.str()
    # every kind of generated test is there
    for name in ("test_onnx_node_case[fake-test_relu]", "test_onnx_node_variant[fake-test_relu-dynbatch]",
                 "test_onnx_random_case[fake-test_relu-random]", "test_onnx_random_case[fake-test_relu-float64]",
                 "test_onnx_export_sample[fake-export-fake.relu-0]",
                 "test_onnx_roundtrip[fake-roundtrip-fake.leaky_relu-alpha0.1]",
                 "test_onnxport_primitive_has_cases[fake-import-Relu-14]",
                 "test_onnxport_primitive_has_cases[fake-export-fake.relu]"):
        assert f"{name} PASSED" in out, name
    assert "test_onnx_node_case[fake-test_add" not in out  # filtered by --onnxport-op
    # a filtered run has no whole-backend meta-tests and no empty-set skips
    assert "hook_documented" not in out and "expected_failures_reviewed" not in out
    assert "empty parameter set" not in out
    data = json.loads(report.read_text())
    exports = [r for r in data["results"] if r["direction"] == "export"]
    assert {r["case"] for r in exports} == {"fake.relu[0]", "fake.leaky_relu[alpha0.1]"}
    assert all(r["outcome"] == "passed" and r["emitted"] for r in exports)
    # the sample at the default opset, and again at opset 13, where Relu has another schema (Relu-6)
    assert data["aggregates"]["fake"]["export"]["Relu"] == {"passed": 2}
    assert data["aggregates"]["fake"]["import"]["Relu"]["passed"] >= 3
    assert {p["op"] for p in data["registry"]["fake"]["import"]} == {"Add", "LeakyRelu", "Relu"}


def test_export_sample_that_lacks_its_declared_op_fails(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_BROKEN", "1")
    result = run(fake_env, "--onnxport-op", "fake.broken", "-k", "export_sample")
    outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["*export:fake.broken*lacks [[]'Sigmoid'[]]*"])


def test_listed_expected_failure_xfails_and_stale_entry_fails(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_BROKEN", "1")
    monkeypatch.setenv("ONNXPORT_FAKE_XFAIL", json.dumps({
        "export:fake.broken[0]": "[AssertionError] declares Sigmoid on purpose",
        "test_relu": "[mismatch] listed although it passes",
    }))
    result = run(fake_env, "--onnxport-op", "fake.broken", "--onnxport-op", "Relu", "--onnxport-no-random",
                 "--onnxport-no-variants", "-k", "export_sample or node_case")
    outcomes(result, xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_relu passes but is listed as an expected failure*remove it*"])


def test_expected_failure_failing_another_way_fails(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_BROKEN", "1")
    monkeypatch.setenv("ONNXPORT_FAKE_XFAIL", json.dumps({"export:fake.broken[0]": "[mismatch] said to differ"}))
    result = run(fake_env, "--onnxport-op", "fake.broken", "--onnxport-no-random", "--onnxport-no-variants",
                 "-k", "export_sample")
    outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["*listed as failing with [[]mismatch[]]*but it failed with [[]AssertionError[]]*"])


def test_expected_failure_list_is_reviewed(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_XFAIL", json.dumps({
        "test_relu": "",
        "relu": "a substring is not a case name",
        "test_relu[float7]": "no such variant",
        "export:fake.nothing": "no such exporter",
    }))
    result = run(fake_env, "-k", "expected_failures_reviewed")
    outcomes(result, failed=1)
    result.stdout.fnmatch_lines([
        "*'test_relu': the reason is empty*",
        "*'relu': no official ONNX node case is named 'relu' (exact names only)*",
        "*'test_relu[[]float7[]]': unknown variant 'float7'*",
        "*'export:fake.nothing': no export primitive 'fake.nothing' is registered*",
    ])


def test_machine_dependent_expected_failure_fails_the_meta_test(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_XFAIL", json.dumps({
        "test_relu": "[mismatch] NaN on CPUs without AVX-512 (the scalar kernel runs there), measured",
    }))
    result = run(fake_env, "-k", "expected_failures_reviewed")
    outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["*'test_relu': the reason names a CPU vector extension ('avx-512')*every machine*"])


def test_primitive_without_cases_fails_the_meta_test(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_NOCASE", "1")
    result = run(fake_env, "--onnxport-op", "NoCase", "-k", "primitive_has_cases")
    outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["*fake import com.fake::NoCase since 1*has no test case*"])


def test_plugin_that_fails_to_import_fails_the_run(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES / "broken_plugin"))
    monkeypatch.setenv("ONNXPORT_BLOCK_PLUGINS", "torch,jax,tensorflow,example")
    result = run(fake_env, "--onnxport-op", "Relu")
    assert result.ret != 0
    text = result.stdout.str() + result.stderr.str()
    assert re.search(r"PluginError.*'broken'.*failed to import.*ModuleNotFoundError", text), text


def test_hook_problems_names_undocumented_arguments() -> None:
    import types

    import pluggy

    from onnxport_testkit.meta import hook_problems

    spec = pluggy.HookspecMarker("demo")
    mod = types.ModuleType("demo_hooks")
    mod.PROJECT = "demo"

    @spec
    def demo_documented(registrar):
        """Register what a plugin brings, documented properly.

        :param registrar: the registration object.
        """

    @spec
    def demo_bare(obj, extra):
        """Only a summary, long enough but no parameters."""

    mod.demo_documented, mod.demo_bare = demo_documented, demo_bare
    problems = hook_problems(mod)
    assert problems["demo_documented"] == []
    assert problems["demo_bare"] == ["argument 'obj' is not documented (':param obj:')",
                                     "argument 'extra' is not documented (':param extra:')"]


def test_every_hook_is_documented_for_contributors() -> None:
    from onnxport.plugin import hookspecs
    from onnxport_testkit.meta import hook_problems

    text = (Path(__file__).parents[2] / "CONTRIBUTING.md").read_text()
    for hook, problems in hook_problems(hookspecs).items():
        assert not problems, (hook, problems)
        assert f"`{hook}" in text, f"CONTRIBUTING.md does not document the hook {hook}"


# -- tolerances and how expected failures fail (issue 18) -----------------------------------------
def test_float32_default_tolerance_catches_drift_of_a_few_parts_in_ten_thousand() -> None:
    import numpy as np

    from onnxport_testkit.compare import Mismatch, compare_outputs

    x = np.linspace(0.5, 2.0, 50, dtype=np.float32)
    compare_outputs(x, x * np.float32(1 + 2e-6))
    with pytest.raises(Mismatch, match="differ"):
        compare_outputs(x, x * np.float32(1 + 3e-4))


def test_declared_tolerances_take_the_loosest_and_need_a_reason() -> None:
    import sys
    import types

    import numpy as np

    from onnxport_testkit.compare import compare_outputs, declared_tolerances

    mod = types.ModuleType("_tol_probe")
    mod.TEST_TOLERANCES = {"Conv": {"float32": (1e-4, 1e-5, "long accumulations")}}

    def fn() -> None: ...

    fn.__module__ = "_tol_probe"
    sys.modules["_tol_probe"] = mod
    try:
        over = declared_tolerances([(fn, "Conv"), (fn, "Relu")])
        assert over == {"float32": (1e-4, 1e-5)}
        x = np.ones(4, np.float32)
        compare_outputs(x, x * np.float32(1 + 5e-5), overrides=over)
        mod.TEST_TOLERANCES = {"Conv": {"float32": (1e-4, 1e-5, "")}}
        with pytest.raises(ValueError, match="reason"):
            declared_tolerances([(fn, "Conv")])
    finally:
        del sys.modules["_tol_probe"]


def test_an_expected_failure_says_how_it_fails() -> None:
    from onnxport_testkit.compare import Mismatch
    from onnxport_testkit.meta import expected_failure_problems
    from onnxport_testkit.runner import failed_how, failure_mode

    assert failure_mode("[mismatch] numpy's draws") == ("mismatch", "numpy's draws")
    assert failure_mode("no prefix") == (None, "no prefix")
    assert failed_how(Mismatch("x")) == "mismatch"
    assert failed_how(AssertionError("x")) == "AssertionError"
    assert failed_how(KeyError("x")) == "KeyError"
    problems = expected_failure_problems({"test_abs": "just a reason"}, {"test_abs"}, {})
    assert len(problems) == 1 and "how the case fails" in problems[0]
    assert not expected_failure_problems({"test_abs": "[mismatch] a reason"}, {"test_abs"}, {})


def test_unfiltered_run_has_the_meta_tests(fake_env: pytest.Pytester) -> None:
    result = run(fake_env, "-v", "-k", "hook_documented or expected_failures_reviewed")
    outcomes(result, failed=0, passed=3)
    result.stdout.fnmatch_lines(["*test_onnxport_expected_failures_reviewed?fake? PASSED*",
                                 "*test_onnxport_hook_documented?onnxport_register? PASSED*"])


@pytest.mark.parametrize("term, hint", [
    ("Reluu", "did you mean Relu?"),
    ("fake.reluu", "did you mean fake.relu?"),
    ("com.other::Relu", ""),
    ("Conv", ""),  # an ONNX op the fake backend does not register
])
def test_a_filter_that_selects_nothing_is_an_error(fake_env: pytest.Pytester, term: str, hint: str) -> None:
    result = run(fake_env, "--onnxport-op", "Relu", "--onnxport-op", term)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--onnxport-op {term} selects nothing*backend(s) fake*{hint}*"])
    assert "passed" not in result.stdout.str()


def test_filters_take_domains_and_export_targets(fake_env: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_FAKE_NOCASE", "1")
    result = run(fake_env, "-v", "--onnxport-op", "com.fake::NoCase", "--onnxport-op", "fake.leaky_relu",
                 "--onnxport-op", "ai.onnx::Add", "--onnxport-no-random", "--onnxport-no-variants")
    out = result.stdout.str()
    assert "test_onnxport_primitive_has_cases[fake-import-com.fake::NoCase-1] FAILED" in out
    assert "test_onnx_export_sample[fake-export-fake.leaky_relu-alpha0.1] PASSED" in out
    assert "test_onnx_node_case[fake-test_add] PASSED" in out
    assert "fake.relu" not in out and "test_relu" not in out  # not selected
    # the domain must match: the default domain has no NoCase
    result = run(fake_env, "--onnxport-op", "NoCase")
    result = run(fake_env, "--onnxport-op", "ai.onnx::NoCase")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_package_filter(fake_env: pytest.Pytester) -> None:
    result = run(fake_env, "-v", "--onnxport-package", "onnxport_fake", "--onnxport-op", "Relu",
                 "--onnxport-no-random", "--onnxport-no-variants")
    outcomes(result, failed=0)
    assert "test_onnx_node_case[fake-test_relu] PASSED" in result.stdout.str()
    result = run(fake_env, "--onnxport-package", "onnxport_nothing")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--onnxport-package onnxport_nothing selects nothing*"])


def test_custom_ops_run_with_their_numpy_reference() -> None:
    import numpy as np
    from onnx import helper

    from onnxport import RegistryError, Sample
    from onnxport_testkit.reference import run_with_custom_ops

    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("ScaledTanh", ["r"], ["s"], domain="com.example", alpha=2.0),
             helper.make_node("Shift", ["s"], ["y"], domain="com.other", by=1.5)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [4])],
                              [helper.make_tensor_value_info("y", 1, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1),
                                                    helper.make_opsetid("com.other", 1)])
    x = np.array([-1.0, 0.0, 0.5, 2.0], np.float32)
    table = {"com.example::ScaledTanh": lambda v, alpha=1.0: alpha * np.tanh(v),
             "com.other::Shift": lambda v, by=0.0: v + np.float32(by)}
    (y,) = run_with_custom_ops(model, [x], table)
    np.testing.assert_allclose(y, 2.0 * np.tanh(np.maximum(x, 0)) + 1.5, rtol=1e-6)
    with pytest.raises(AssertionError, match=r"custom ops \['com.other::Shift'\] that the sample's reference"):
        run_with_custom_ops(model, [x], {"com.example::ScaledTanh": table["com.example::ScaledTanh"]})
    with pytest.raises(AssertionError, match="2 custom op types"):
        run_with_custom_ops(model, [x], table["com.other::Shift"])
    with pytest.raises(RegistryError, match="runner 'ort'"):
        Sample(None, (), runner="ort")
    with pytest.raises(RegistryError, match="not both"):
        Sample(None, (), reference=np.tanh, runner="import")
