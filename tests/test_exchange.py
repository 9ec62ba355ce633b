"""Cross-framework exchange: every exporter x importer pair (torch, jax, tensorflow: 9) on the shared
model set of :mod:`onnxport_testkit.exchange`.

Each pair and model: export, ``onnx.checker`` full check, import, outputs equal to the source's
within float32 tolerance, the same trainable count, one gradient step in the target that changes
the loss. A pair whose backend is not installed is skipped naming the package to install
(``tox -e cross`` installs all three); a source form in the reviewed ``NOT_EXPORTABLE`` list is
skipped with its reason. Results go into the testkit report (``--onnxport-report``).
"""

from __future__ import annotations

import numpy as np
import pytest

import onnxport
from onnxport_testkit import exchange
from onnxport_testkit.exchange import FRAMEWORKS, MODELS


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("target", FRAMEWORKS)
@pytest.mark.parametrize("source", FRAMEWORKS)
def test_exchange(source: str, target: str, model: str, request: pytest.FixtureRequest) -> None:
    result = exchange.run_pair(source, target, model)
    request.node.user_properties.append(("onnxport_exchange", result.as_dict()))  # the testkit report
    if result.status == "not_run":
        pytest.skip(f"{source} -> {target}, {model}: {result.message}")
    if result.status == "xfailed":
        pytest.xfail(f"{source} -> {target}, {model}: {result.check}: {result.message}")
    assert result.status == "passed", f"{source} -> {target}, {model}: {result.check} failed: {result.message}"


def test_not_exportable_is_reviewed() -> None:
    """Every entry names a real framework and model and says why."""
    for (fw, model), reason in exchange.NOT_EXPORTABLE.items():
        assert fw in FRAMEWORKS and model in MODELS and len(reason) > 20
    for (src, dst, model, check), reason in exchange.EXPECTED.items():
        assert src in (*FRAMEWORKS, "*") and dst in FRAMEWORKS and model in MODELS
        assert check in exchange.CHECKS and len(reason) > 20


def test_missing_importer_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    if "torch" not in onnxport.backends():
        pytest.skip("backend 'torch' is not installed: pip install onnxport-torch")
    with pytest.raises(onnxport.BackendNotFoundError, match="pip install onnxport-nosuch"):
        onnxport.convert(torch.nn.Linear(2, 2), to="nosuch", example_inputs=(torch.zeros(1, 2),))


def test_missing_exporter_names_the_package() -> None:
    class Foreign:  # an object no installed backend exports
        pass

    with pytest.raises(onnxport.BackendNotFoundError, match="pip install onnxport-"):
        onnxport.export_model(Foreign(), ())


def test_convert_onnx_input_imports(tmp_path) -> None:
    """``convert`` of an ONNX model only imports it."""
    if "torch" not in onnxport.backends():
        pytest.skip("backend 'torch' is not installed: pip install onnxport-torch")
    import onnx
    from onnx import helper

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    m = onnxport.convert(str(path), to="torch")
    out = onnxport.get_backend("torch").run(m, [np.array([-1.0, 2.0], np.float32)])
    np.testing.assert_array_equal(out[0], [0.0, 2.0])
