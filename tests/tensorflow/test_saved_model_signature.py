"""A plain ``tf.saved_model.save(model, path)`` of an imported model writes a ``serving_default``
signature over the real graph inputs (an initializer an older-IR file also lists as an input is a
weight, not an input): reloaded, its signature and a TFLite conversion of the folder run and
match onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

tf = pytest.importorskip("tensorflow")
ort = pytest.importorskip("onnxruntime")

import onnxport  # noqa: E402
from onnxport_testkit.light import light_inputs, light_models  # noqa: E402


def _two_inputs_old_ir() -> onnx.ModelProto:
    """IR 3: two real inputs (one named ``x:0``), a weight that is also a graph input, two outputs."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((3,)).astype(np.float32), "bias")
    nodes = [helper.make_node("Gemm", ["x:0", "W", "bias"], ["h"]),
             helper.make_node("Add", ["h", "y"], ["sum"]),
             helper.make_node("Relu", ["sum"], ["out/relu"])]
    graph = helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info("x:0", TensorProto.FLOAT, ["n", 4]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("bias", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("out/relu", TensorProto.FLOAT, ["n", 3])],
        initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    onnx.checker.check_model(model)
    return model


def _cases() -> dict[str, tuple[onnx.ModelProto, dict[str, np.ndarray]]]:
    squeeze = onnx.load(str(light_models()["squeezenet"]))
    rng = np.random.default_rng(1)
    two = _two_inputs_old_ir()
    return {
        "squeezenet": (squeeze, {"data_0": light_inputs(squeeze)[0]}),
        "two_inputs": (two, {"x:0": rng.standard_normal((2, 4)).astype(np.float32),
                             "y": rng.standard_normal((2, 3)).astype(np.float32)}),
    }


CASES = _cases()


def _ort(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _key(name: str) -> str:
    return name.replace(":", "_")  # the signature's keys: ONNX names made valid TF names


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_save_is_servable_and_converts_with_tflite(name, tmp_path):
    proto, feeds = CASES[name]
    inits = {i.name for i in proto.graph.initializer}
    assert inits & {i.name for i in proto.graph.input}  # initializers listed as graph inputs
    want = _ort(proto, feeds)
    model = onnxport.import_model(proto, backend="tensorflow")
    path = str(tmp_path / "sm")
    tf.saved_model.save(model, path)

    loaded = tf.saved_model.load(path)
    assert list(loaded.signatures) == ["serving_default"]
    sig = loaded.signatures["serving_default"]
    args, kwargs = sig.structured_input_signature
    assert not args and sorted(kwargs) == sorted(_key(n) for n in feeds)  # the real inputs only
    got = sig(**{_key(n): tf.constant(x) for n, x in feeds.items()})
    assert sorted(got) == sorted(_key(n) for n in want)
    for n, w in want.items():
        _close(got[_key(n)].numpy(), w)
    positional = loaded(*[tf.constant(x) for x in feeds.values()])  # the model's own call, as before
    first = positional[0] if isinstance(positional, (tuple, list)) else positional
    _close(first.numpy(), next(iter(want.values())))

    blob = tf.lite.TFLiteConverter.from_saved_model(path).convert()
    runner = tf.lite.Interpreter(model_content=blob).get_signature_runner("serving_default")
    lite = runner(**{_key(n): x for n, x in feeds.items()})
    assert sorted(lite) == sorted(_key(n) for n in want)
    for n, w in want.items():
        _close(np.asarray(lite[_key(n)]), w)


def test_a_weight_listed_as_input_is_overridden_through_its_variable(tmp_path):
    """Not a signature input: the variable holds it, and the SavedModel holds the variable's value."""
    proto, feeds = CASES["two_inputs"]
    model = onnxport.import_model(proto, backend="tensorflow")
    assert model.input_names == ["x:0", "y"] and "W" in model.weights
    model.weights["W"].assign(np.zeros((4, 3), np.float32))
    tf.saved_model.save(model, str(tmp_path / "sm"))
    sig = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    got = sig(x_0=tf.constant(feeds["x:0"]), y=tf.constant(feeds["y"]))
    bias = numpy_helper.to_array(next(i for i in proto.graph.initializer if i.name == "bias"))
    np.testing.assert_allclose(got["sum"].numpy(), feeds["y"] + bias, rtol=1e-6)


def test_signature_follows_train_and_eval():
    proto, _ = CASES["two_inputs"]
    model = onnxport.import_model(proto, backend="tensorflow")
    first = model._default_save_signature
    assert model._default_save_signature is first  # one function while the model's trace stands
    model.train()
    assert model._default_save_signature is not first
