"""TF -> ONNX -> TF through our own importer: equal outputs and the same variable names.

Only models whose every exported op the TensorFlow importer already imports are round-tripped
here; the generated ``tensorflow-roundtrip`` tests cover each export primitive's samples.
"""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import onnxport  # noqa: E402

RNG = np.random.default_rng(1)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape).astype("float32")


def roundtrip(obj, x):
    """(exported model, imported module, outputs of the import) for one input."""
    exported = onnxport.export_model(obj, (x,))
    back = onnxport.import_model(exported, backend="tensorflow")
    out = onnxport.get_backend("tensorflow").run(back, [x])
    return exported, back, out


def _mlp():
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="tanh", name="hidden"),
                             keras.layers.Dense(4, name="head"), keras.layers.Softmax()])


def test_keras_mlp_roundtrip_keeps_outputs_and_names():
    model = _mlp()
    x = rand(3, 6)
    exported, back, out = roundtrip(model, x)
    np.testing.assert_allclose(out[0], model(x).numpy(), rtol=1e-5, atol=1e-6)
    names = {"hidden/kernel", "hidden/bias", "head/kernel", "head/bias"}
    assert set(exported.graph.initializers) == names
    assert set(back.weights) == names
    for layer in ("hidden", "head"):
        np.testing.assert_array_equal(back.weights[f"{layer}/kernel"].numpy(), model.get_layer(layer).kernel.numpy())
    # and the imported module exports again under the same names, to the same function
    again = onnxport.export_model(back, (x,))
    assert set(again.graph.initializers) == names
    out2 = onnxport.get_backend("tensorflow").run(onnxport.import_model(again, backend="tensorflow"), [x])
    np.testing.assert_allclose(out2[0], out[0], rtol=1e-6, atol=1e-7)


def test_tf_module_roundtrip():
    class Affine(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(rand(5, 3), name="w")
            self.b = tf.Variable(rand(3), name="b")

        @tf.function
        def __call__(self, x):
            return tf.nn.sigmoid(tf.matmul(tf.abs(x), self.w) + self.b) * 2.0 - 1.0

    mod = Affine()
    x = rand(4, 5)
    _, back, out = roundtrip(mod, x)
    np.testing.assert_allclose(out[0], mod(x).numpy(), rtol=1e-5, atol=1e-6)
    assert {"w", "b"} <= set(back.weights)
