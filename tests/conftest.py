"""Shared fixtures: small ONNX models built with onnx.helper; in a tox env, the skip guard
(onnxport_testkit.skips: a skip whose reason tests/allowed_skips.txt does not admit fails the run)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def make_model(nodes, inputs, outputs, initializers=(), opset=21, domains=(), name="g") -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(initializers))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    return model


def tensor_info(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


@pytest.fixture
def relu_model() -> onnx.ModelProto:
    return make_model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu1")],
        [tensor_info("x", [2, 3])],
        [tensor_info("y", [2, 3])],
    )


@pytest.fixture
def mlp_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "fc1.weight")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "fc1.bias")
    w2 = numpy_helper.from_array(rng.standard_normal((3, 8)).astype(np.float32), "fc2.weight")
    b2 = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "fc2.bias")
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], name="fc2", transB=1),
    ]
    return make_model(nodes, [tensor_info("x", ["batch", 4])], [tensor_info("y", ["batch", 3])], [w1, b1, w2, b2])


# -- no silent skips (tox sets ONNXPORT_STRICT_SKIPS to the env name) -----------------------------
ALLOWLIST = Path(__file__).with_name("allowed_skips.txt")
_GUARD = pytest.StashKey[object]()


def pytest_configure(config: pytest.Config) -> None:
    from onnxport_testkit import skips

    env = os.environ.get(skips.ENV_VAR)
    if not env:
        return
    missing = skips.missing_packages()
    if missing:
        raise pytest.UsageError(f"tox env {env!r} is meant to have {missing} ({skips.PACKAGES_VAR}), "
                                "but they cannot be imported")
    present = skips.present_packages()
    if present:
        raise pytest.UsageError(f"tox env {env!r} is meant to lack {present} ({skips.ABSENT_VAR}): a dependency "
                                "that no package of the env declares brought them, or the env installs them")
    if hasattr(config, "workerinput"):
        return  # the xdist controller sees every worker's reports
    guard = skips.SkipGuard(env, skips.load_allowlist(ALLOWLIST))
    config.stash[_GUARD] = guard
    config.pluginmanager.register(guard, "onnxport-skip-guard")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    guard = session.config.stash.get(_GUARD, None)
    if guard is not None and guard.unlisted and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    guard = config.stash.get(_GUARD, None)
    if guard is None:
        return
    tr = terminalreporter
    tr.write_sep("=", f"skip guard ({guard.env}): {guard.listed} allowed skip(s), {len(guard.unlisted)} not allowed")
    for nodeid, reason in guard.unlisted[:200]:
        tr.write_line(f"NOT ALLOWED SKIP {nodeid}: {reason[:300]}")
    if guard.unlisted:
        tr.write_line(f"a skip in a tox env needs an entry in {ALLOWLIST.name} (envs, match, why)")
