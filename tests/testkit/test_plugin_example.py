"""An out-of-tree plugin (tests/testkit/fixtures/plugin_example: a package plus its ``.dist-info``
with an ``onnxport`` entry point) adds ``com.example::ScaledTanh`` to the torch backend: models
using it import and run, and the testkit generates its tests with no change to onnxport."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxport_torch")
pytest_plugins = ("pytester",)

EXAMPLE = Path(__file__).parent / "fixtures" / "plugin_example"


@pytest.fixture
def example_installed(monkeypatch):
    from onnxport.plugin import discovery as plugins

    monkeypatch.syspath_prepend(str(EXAMPLE))  # as if pip-installed: the entry point is found
    monkeypatch.setenv("ONNXPORT_BLOCK_PLUGINS", "jax,tensorflow")
    plugins.reset()
    yield
    plugins.reset()


def test_entry_point_registers_the_custom_op(example_installed) -> None:
    import onnxport

    reg = onnxport.plugin.registry()
    assert "example" in reg.plugins
    prim = reg.find_import("torch", "com.example", "ScaledTanh", 1)
    assert prim is not None and prim.source == "onnxport_example.ops.scaled_tanh.scaled_tanh"
    assert len(prim.cases) == 3


def test_models_with_the_custom_op_import_and_run(example_installed) -> None:
    import torch
    from onnx import helper

    import onnxport

    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("ScaledTanh", ["r"], ["y"], domain="com.example", alpha=2.0, beta=0.5),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [3, 4])],
                              [helper.make_tensor_value_info("y", 1, [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1)])
    module = onnxport.import_model(model, backend="torch")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    got = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, 2.0 * np.tanh(0.5 * np.maximum(x, 0)), rtol=1e-6)


def test_the_testkit_generates_its_tests(example_installed, pytester: pytest.Pytester, monkeypatch) -> None:
    from onnxport_testkit.cases import cache_root

    monkeypatch.setenv("ONNXPORT_CACHE", str(cache_root()))
    pytester.makepyfile(test_gen="from onnxport_testkit.generated import *  # noqa: F403\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "0", "-v", "--onnxport-backend", "torch",
                                          "--onnxport-op", "ScaledTanh")
    result.stdout.fnmatch_lines([
        "*test_onnx_import_case?torch-import-com.example::ScaledTanh-defaults? PASSED*",
        "*test_onnx_import_case?torch-import-com.example::ScaledTanh-alpha_beta? PASSED*",
        "*test_onnx_import_case?torch-import-com.example::ScaledTanh-float64? PASSED*",
        "*test_onnxport_primitive_has_cases?torch-import-com.example::ScaledTanh-1? PASSED*",
    ])
    assert result.parseoutcomes().get("failed", 0) == 0
