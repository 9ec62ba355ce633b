"""Surgery results in TensorFlow: pruned torch.onnx exports run, to_sequential nests Keras blocks."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")
pytest.importorskip("torch")

import onnxport  # noqa: E402
from onnxport.edit.surgery import prune_channels  # noqa: E402
from tests.conftest import make_model, tensor_info  # noqa: E402
from tests.core import _surgery_nets as nets  # noqa: E402

SHAPES = {name: shape for name, (_, shape) in nets.NETS.items()}


def ort_run(model, x: np.ndarray) -> np.ndarray:
    import onnx_ir as ir
    import onnxruntime as ort

    proto = model if isinstance(model, onnx.ModelProto) else ir.serde.serialize_model(model)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("name", sorted(nets.NETS))
def test_pruned_model_fine_tunes_in_tensorflow(name: str) -> None:
    pruned = prune_channels(nets.onnx_bytes(name, False), fraction=0.3, per="layer")
    x = np.random.default_rng(3).standard_normal(SHAPES[name]).astype(np.float32)
    m = onnxport.import_model(pruned, backend="tensorflow")
    np.testing.assert_allclose(np.asarray(m(x)), ort_run(pruned, x), rtol=1e-4, atol=1e-5)
    opt = keras.optimizers.SGD(0.05)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(m.serve(x)))
    opt.apply_gradients(zip(tape.gradient(loss, m.trainable_variables), m.trainable_variables))
    assert float(tf.reduce_mean(tf.square(m.serve(x)))) < float(loss)


@pytest.mark.parametrize("name, block", [("resnet", "Residual"), ("densenet", "Parallel")])
def test_to_sequential_nests_keras_blocks(name: str, block: str) -> None:
    from onnxport_tensorflow.sequential import Parallel, Residual

    model = nets.onnx_bytes(name, True)
    seq = onnxport.to_sequential(model, backend="tensorflow")
    assert isinstance(seq, keras.Sequential)
    kind = {"Residual": Residual, "Parallel": Parallel}[block]
    blocks = [s for s in seq.layers if isinstance(s, kind)]
    want = {"resnet": 8, "densenet": 3}[name]
    assert len(blocks) == want, [type(s).__name__ for s in seq.layers]
    x = np.random.default_rng(6).standard_normal(SHAPES[name]).astype(np.float32)
    expected = ort_run(onnx.load_from_string(model), x)
    np.testing.assert_allclose(np.asarray(seq(x)), expected, rtol=1e-4, atol=1e-5)
    # every weight of the source model is one variable of the nested model
    n_weights = sum(int(np.prod(t.dims)) for t in onnx.load_from_string(model).graph.initializer
                    if t.data_type == onnx.TensorProto.FLOAT)
    assert sum(int(np.prod(v.shape)) for v in seq.weights) == n_weights
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(seq(x))
    grads = tape.gradient(loss, seq.trainable_variables)
    assert seq.trainable_variables and all(g is not None for g in grads)


def test_residual_shortcut_and_shared_weight_train_once() -> None:
    from onnxport_tensorflow.sequential import Residual

    w = numpy_helper.from_array(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="first"),
             helper.make_node("Sigmoid", ["a"], ["b"], name="sig"),
             helper.make_node("MatMul", ["b", "w"], ["c"], name="second"),
             helper.make_node("Add", ["a", "c"], ["y"], name="residual")]
    small = make_model(nodes, [tensor_info("x", [3, 2])], [tensor_info("y", [3, 2])], initializers=[w])
    seq = onnxport.to_sequential(small, backend="tensorflow")
    assert isinstance(seq.layers[1], Residual) and isinstance(seq.layers[1].shortcut, keras.layers.Identity)
    x = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    wv = numpy_helper.to_array(w)
    a = x @ wv
    np.testing.assert_allclose(np.asarray(seq(x)), a + (1 / (1 + np.exp(-a))) @ wv, rtol=1e-5, atol=1e-6)
    # "w" is read by two nodes: one variable, trained once by fit
    assert len(seq.trainable_variables) == 1
    seq.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    target = np.zeros((3, 2), np.float32)
    before = float(np.mean((np.asarray(seq(x)) - target) ** 2))
    seq.fit(x, target, epochs=3, verbose=0, batch_size=3)
    after = float(np.mean((np.asarray(seq(x)) - target) ** 2))
    assert after < before


def test_widened_inserted_and_removed_models_import_into_tensorflow() -> None:
    from onnxport.edit.surgery import insert_layer, remove_layer, widen_channels

    edits = {
        "densenet": widen_channels(nets.onnx_bytes("densenet", False), "/block/block.1/conv/Conv", 7, init="net2net"),
        "resnet": insert_layer(nets.onnx_bytes("resnet", False), after="/blocks/blocks.0/Relu_1_output_0",
                               layer="conv", kernel_size=3),
        "mobilenet": remove_layer(nets.onnx_bytes("mobilenet", False), "/blocks/blocks.2/body/body.0/Conv"),
    }
    for name, model in edits.items():
        x = np.random.default_rng(7).standard_normal(SHAPES[name]).astype(np.float32)
        m = onnxport.import_model(model, backend="tensorflow")
        np.testing.assert_allclose(np.asarray(m(x)), ort_run(model, x), rtol=1e-4, atol=1e-5, err_msg=name)
