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
    return sess.run(None, {i.name: np.asarray(x) for i, x in zip(sess.get_inputs(), xs)})


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


# -- TensorLists (tf.TensorArray in while loops) ---------------------------------------------------
def _fn(f):
    return tf.function(f, autograph=False)


def test_tensor_array_loop_runs_at_other_lengths():
    def rows(x):
        n = tf.shape(x)[0]
        ta = tf.TensorArray(tf.float32, size=n, element_shape=x.shape[1:])

        def body(i, acc, ta):
            acc = acc * 0.5 + x[i]
            return i + 1, acc, ta.write(i, tf.tanh(acc))

        _, last, ta = tf.while_loop(lambda i, acc, ta: i < n, body, (0, tf.zeros_like(x[0]), ta))
        return ta.stack(), last

    f = _fn(rows)
    x = rand(5, 3)
    proto = export_checked(f, [x])
    assert {"Loop", "ConcatFromSequence"} <= set(ops(proto))
    compare(proto, [x], f(x))
    x7 = rand(7, 3)  # the loop's trip count and the list's length follow the input
    compare(proto, [x7], f(x7))


def test_tensor_array_written_backwards_reads_zeros_where_unwritten():
    def backwards(x):
        ta = tf.TensorArray(tf.float32, size=5, element_shape=[3])

        def body(i, ta):
            return i + 1, ta.write(4 - i, x[i] * 2.0)

        _, ta = tf.while_loop(lambda i, ta: i < 3, body, (0, ta))  # items 0 and 1 stay unwritten
        return ta.stack()

    f = _fn(backwards)
    x = rand(3, 3)
    proto = export_checked(f, [x], dynamic_shapes=[None])
    compare(proto, [x], f(x))
    assert not np.asarray(f(x))[:2].any()


def test_tensor_list_of_unknown_element_shape_out_of_order_write_fails_in_runtime():
    """An element shape TF does not know gives an empty list; a write past its end cannot be
    filled and the runtime refuses it rather than computing something else."""
    def skip_first(x):
        t = tf.shape(x)[1]
        ta = tf.TensorArray(tf.float32, size=t + 1)

        def body(i, ta):
            return i + 1, ta.write(i + 1, x[:, i])

        _, ta = tf.while_loop(lambda i, ta: i < t, body, (0, ta))
        return ta.stack()

    f = _fn(skip_first)
    x = rand(2, 3)
    proto = export_checked(f, [x])
    with pytest.raises(Exception, match="(?i)position|index|invalid|range"):
        run_ort(proto, x)


def test_rnn_without_layer_primitive_exports_through_its_while_loop():
    layer = keras.layers.RNN(keras.layers.SimpleRNNCell(4), return_sequences=True)  # the generic RNN: no primitive
    x = rand(2, 6, 3)
    ref = layer(x)
    proto = export_checked(layer, [x])
    compare(proto, [x], ref, rtol=1e-4, atol=1e-5)
    assert "Loop" in ops(proto)


# -- StridedSlice with run-time bounds -------------------------------------------------------------
def test_run_time_slice_bounds_in_a_model_input():
    f = _fn(lambda x, i, j: x[:, i:j, ::-1][..., 0])
    x = rand(2, 6, 4)
    proto = export_checked(f, [x, np.int32(1), np.int32(5)], dynamic_shapes=[{0: "batch"}, None, None])
    assert "Slice" in ops(proto)
    for i, j in [(1, 5), (0, 6), (-3, -1), (4, 2)]:
        compare(proto, [x, np.int32(i), np.int32(j)], f(x, np.int32(i), np.int32(j)))


def test_run_time_shrink_index_negative_one_takes_the_last_item():
    f = _fn(lambda x, i: x[:, i])
    x = rand(3, 5)
    proto = export_checked(f, [x, np.int32(-1)], dynamic_shapes=[{0: "batch"}, None])
    for i in (-1, 0, 2, -5):
        compare(proto, [x, np.int32(i)], f(x, np.int32(i)))
