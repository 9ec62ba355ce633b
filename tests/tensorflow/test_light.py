"""The shipped ``light_*`` zoo models in TensorFlow: outputs against onnxruntime, the
channels-last plan's traced graph (no activation Transpose between convolutions) and TFLite."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

tf = pytest.importorskip("tensorflow")
ort = pytest.importorskip("onnxruntime")

import onnxport  # noqa: E402
from onnxport_testkit.light import light_inputs, light_models, randomized  # noqa: E402

LIGHT = light_models()
#: the CNNs converted to TFLite (small enough to convert in seconds)
TFLITE = ["squeezenet", "resnet50", "shufflenet"]


def _ort(proto: onnx.ModelProto, inputs: list[np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, inputs)))[0]


def _activation_transposes(model) -> list:
    """Transpose ops of the traced graph that move activations (weight reads excluded)."""
    graph = model.serve.get_concrete_function().graph
    return [op for op in graph.get_operations()
            if op.type == "Transpose" and op.inputs[0].op.type not in ("ReadVariableOp", "Const")]


@pytest.mark.parametrize("name", sorted(LIGHT))
def test_light_model_matches_onnxruntime(name: str) -> None:
    """On seeded random weights: the shipped weights are all 0.02, so squeezenet's 1000 logits are one
    value near 1.6e10 (a float32 step there is 2048) and its softmax turns a one-step rounding
    difference of any kernel into 0.125 on 8 classes: an ill-conditioned comparison, not a check."""
    proto = randomized(onnx.load(str(LIGHT[name])))
    model = onnxport.import_model(proto, backend="tensorflow")
    inputs = light_inputs(proto)
    ours = model(*inputs).numpy()
    expected = _ort(proto, inputs)
    assert ours.shape == expected.shape and ours.dtype == np.float32
    assert np.abs(ours - expected).max() < 1e-4 * max(1.0, float(np.abs(expected).max()))


@pytest.mark.parametrize("name", ["resnet50", "densenet121"])
def test_no_transpose_between_convolutions(name: str) -> None:
    proto = onnx.load(str(LIGHT[name]))
    planned = onnxport.import_model(proto, backend="tensorflow")
    plain = onnxport.import_model(proto, backend="tensorflow", channels_last=False)
    convs = [op for op in planned.serve.get_concrete_function().graph.get_operations() if op.type == "Conv2D"]
    assert len(convs) > 50
    # in: NCHW -> NHWC once; out: back to NCHW once where the classifier head flattens
    assert len(_activation_transposes(planned)) <= 2
    assert len(_activation_transposes(plain)) > len(convs)  # without the plan: around every Conv
    inputs = light_inputs(proto)
    np.testing.assert_allclose(planned(*inputs).numpy(), plain(*inputs).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", TFLITE)
def test_tflite_conversion_matches_onnxruntime(name: str, tmp_path) -> None:
    proto = onnx.load(str(LIGHT[name]))
    model = onnxport.import_model(proto, backend="tensorflow")
    inputs = light_inputs(proto)
    tf.saved_model.save(model, str(tmp_path / "sm"), signatures=model.serve.get_concrete_function())
    converter = tf.lite.TFLiteConverter.from_saved_model(str(tmp_path / "sm"))
    blob = converter.convert()
    interp = tf.lite.Interpreter(model_content=blob)
    (detail,) = interp.get_input_details()
    interp.resize_tensor_input(detail["index"], inputs[0].shape)
    interp.allocate_tensors()
    interp.set_tensor(detail["index"], inputs[0])
    interp.invoke()
    ours = interp.get_tensor(interp.get_output_details()[0]["index"])
    expected = _ort(proto, inputs)
    assert ours.shape == expected.shape
    assert np.abs(ours - expected).max() < 1e-4 * max(1.0, float(np.abs(expected).max()))
