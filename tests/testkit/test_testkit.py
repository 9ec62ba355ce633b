"""The testkit tested with pytester: a fake numpy backend (import + export), meta-tests,
expected failures, a broken plugin, and the report that `onnxport coverage` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from onnxport_testkit.cases import cache_root

pytest_plugins = ("pytester",)

FIXTURES = Path(__file__).parent / "fixtures"
GENERATED = "from onnxport_testkit.generated import *  # noqa: F403\n"


@pytest.fixture
def fresh_registry():
    """Rebuild the plugin registry before and after: the runs below change the installed plugins."""
    from onnxport import plugins

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
    from onnxport import plugins

    plugins.reset()  # the environment of this run decides which plugins register
    return p.runpytest_inprocess("-p", "no:cacheprovider", "-n", "0", "--onnxport-backend", "fake", *args)


def outcomes(result: pytest.RunResult, **expected: int) -> None:
    """Check only the named outcome counts (the others may vary with the node cases)."""
    got = result.parseoutcomes()
    for key, n in expected.items():
        assert got.get(key, 0) == n, (key, got)


def test_fake_backend_generates_and_passes(fake_env: pytest.Pytester) -> None:
    report = fake_env.path / "report.json"
    result = run(fake_env, "--onnxport-op", "Relu", "--onnxport-op", "LeakyRelu", f"--onnxport-report={report}", "-v")
    outcomes(result, failed=0, errors=0)
    out = result.stdout.str()
    # every kind of generated test is there
    for name in ("test_onnx_node_case[fake-test_relu]", "test_onnx_node_variant[fake-test_relu-dynbatch]",
                 "test_onnx_random_case[fake-test_relu-random]", "test_onnx_random_case[fake-test_relu-float64]",
                 "test_onnx_export_sample[fake-export-fake.relu-0]",
                 "test_onnx_roundtrip[fake-roundtrip-fake.leaky_relu-alpha0.1]",
                 "test_onnxport_primitive_has_cases[fake-import-Relu-14]",
                 "test_onnxport_primitive_has_cases[fake-export-fake.relu]",
                 "test_onnxport_hook_documented[onnxport_register]",
                 "test_onnxport_expected_failures_reviewed[fake]"):
        assert f"{name} PASSED" in out, name
    assert "test_onnx_node_case[fake-test_add" not in out  # filtered by --onnxport-op
    data = json.loads(report.read_text())
    exports = [r for r in data["results"] if r["direction"] == "export"]
    assert {r["case"] for r in exports} == {"fake.relu[0]", "fake.leaky_relu[alpha0.1]"}
    assert all(r["outcome"] == "passed" and r["emitted"] for r in exports)
    assert data["aggregates"]["fake"]["export"]["Relu"] == {"passed": 1}
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
    result = run(fake_env, "--onnxport-op", "Relu", "-k", "expected_failures_reviewed")
    outcomes(result, failed=1)
    result.stdout.fnmatch_lines([
        "*'test_relu': the reason is empty*",
        "*'relu': no official ONNX node case is named 'relu' (exact names only)*",
        "*'test_relu[[]float7[]]': unknown variant 'float7'*",
        "*'export:fake.nothing': no export primitive 'fake.nothing' is registered*",
    ])


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
    result.stdout.fnmatch_lines(["*PluginError*'broken'*failed to import*ModuleNotFoundError*"])


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
    from onnxport import hookspecs
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
