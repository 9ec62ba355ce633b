"""TensorFlow export of graph structure: nested function calls (Keras grouped convolutions,
reloaded SavedModels), dilated convolutions, TensorList loops, run-time slices."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import onnxport  # noqa: E402

RNG = np.random.default_rng(1)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape).astype("float32")


def export_checked(obj, xs, **options) -> onnx.ModelProto:
    proto = ir.serde.serialize_model(onnxport.export_model(obj, tuple(xs), **options))
    onnx.checker.check_model(proto, full_check=True)
    return proto


def run_ort(proto: onnx.ModelProto, *xs: np.ndarray) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})


def compare(proto, xs, expected, rtol=1e-4, atol=1e-5) -> None:
    got = run_ort(proto, *xs)
    expected = [np.asarray(t) for t in tf.nest.flatten(expected)]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


# -- nested function calls and dilated convolutions ------------------------------------------------
def test_grouped_conv_nested_call_is_inlined():
    model = keras.Sequential([keras.Input((9, 9, 4)), keras.layers.Conv2D(8, 3, groups=4, name="g"),
                              keras.layers.ReLU(), keras.layers.Conv2D(6, 1, groups=2, name="h")])
    x = rand(2, 9, 9, 4)
    proto = export_checked(model, [x])
    compare(proto, [x], model(x, training=False))
    convs = [n for n in proto.graph.node if n.op_type == "Conv"]
    assert [next(a.i for a in n.attribute if a.name == "group") for n in convs] == [4, 2]
    assert sorted(i.name for i in proto.graph.initializer) == ["g/bias", "g/kernel", "h/bias", "h/kernel"]
    x3 = rand(3, 9, 9, 4)  # the batch stays symbolic through the inlined body
    compare(proto, [x3], model(x3, training=False))


def test_nested_tf_functions_with_variables_are_inlined():
    class Inner(tf.Module):
        def __init__(self):
            self.w = tf.Variable(rand(4, 4), name="w")

        @tf.function(autograph=False)
        def __call__(self, x):
            return tf.nn.relu(x @ self.w)

    class Outer(tf.Module):
        def __init__(self):
            self.a, self.b = Inner(), Inner()

        @tf.function(autograph=False)
        def __call__(self, x):
            return self.b(self.a(x)) + self.a(x)

    m = Outer()
    x = rand(3, 4)
    proto = export_checked(m, [x])
    compare(proto, [x], m(x))
    assert len(proto.graph.initializer) == 2  # each variable once, however often its function runs
    assert ops(proto).count("MatMul") == 3


@pytest.mark.parametrize("layer, shape", [
    (lambda: keras.layers.Conv2D(5, 3, dilation_rate=2), (2, 11, 10, 3)),
    (lambda: keras.layers.Conv2D(5, (3, 2), dilation_rate=(3, 2), padding="same", use_bias=False), (2, 10, 9, 3)),
    (lambda: keras.layers.DepthwiseConv2D(3, dilation_rate=2, padding="same"), (2, 9, 9, 4)),
    (lambda: keras.layers.Conv1D(4, 3, dilation_rate=4, padding="causal"), (2, 17, 3)),
])
def test_dilated_conv_is_one_dilated_conv(layer, shape):
    layer = layer()
    x = rand(*shape)
    ref = layer(x)
    proto = export_checked(layer, [x])
    compare(proto, [x], ref)
    assert ops(proto).count("Conv") == 1
    assert not {"SpaceToDepth", "DepthToSpace"} & set(ops(proto))
    conv = next(n for n in proto.graph.node if n.op_type == "Conv")
    assert max(next(a.ints for a in conv.attribute if a.name == "dilations")) > 1


def test_lone_space_to_batch_is_refused_with_its_name():
    f = tf.function(lambda x: tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]), autograph=False)
    with pytest.raises(onnxport.OnnxportError, match="SpaceToBatchND"):
        onnxport.export_model(f, (rand(1, 4, 4, 2),))


# -- reloaded SavedModels --------------------------------------------------------------------------
def _saved_keras(tmp_path):
    model = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3, activation="relu", name="c"),
                              keras.layers.Conv2D(4, 3, groups=2, name="g"),
                              keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3, name="d")], name="net")
    model.export(str(tmp_path / "saved"), verbose=False)
    return model, tf.saved_model.load(str(tmp_path / "saved"))


def test_saved_model_serve_endpoint_and_signature(tmp_path):
    model, loaded = _saved_keras(tmp_path)
    x = rand(2, 8, 8, 3)
    ref = model(x, training=False)
    for obj in (loaded.serve, loaded.signatures["serving_default"]):
        proto = export_checked(obj, [x])
        compare(proto, [x], ref)
        assert {"net/c/kernel", "net/g/kernel", "net/d/kernel"} <= {i.name for i in proto.graph.initializer}
        assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param  # the saved batch dim stays symbolic
    x5 = rand(5, 8, 8, 3)
    compare(proto, [x5], model(x5, training=False))


def test_saved_tf_module_call(tmp_path):
    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable(rand(3, 2), name="w")
            self.b = tf.Variable(rand(2), name="b")

        @tf.function
        def __call__(self, x):
            return tf.tanh(x @ self.w + self.b)

    m = M()
    m.__call__.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert onnxport.backend_for(loaded) == "tensorflow"
    x = rand(4, 3)
    proto = export_checked(loaded, [x])
    compare(proto, [x], m(x))
    assert sorted(i.name for i in proto.graph.initializer) == ["b", "w"]


def test_concrete_function_with_wrong_input_count_is_refused():
    f = tf.function(lambda x, y: x + y).get_concrete_function(tf.TensorSpec([None, 2]), tf.TensorSpec([None, 2]))
    with pytest.raises(onnxport.OnnxportError, match="2 tensor inputs"):
        onnxport.export_model(f, (rand(1, 2),))
