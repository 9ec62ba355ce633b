"""TensorFlow / Keras export: the API, weight names, shapes, layout, recurrent layers, numerics."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import onnxport  # noqa: E402
from onnxport.errors import InputError, UnsupportedOpError  # noqa: E402

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape).astype("float32")


def proto_of(model: ir.Model) -> onnx.ModelProto:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    return proto


def run_ort(proto: onnx.ModelProto, *xs: np.ndarray) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})


def ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


def export_and_compare(obj, xs, expected=None, rtol=1e-4, atol=1e-5, **options) -> onnx.ModelProto:
    """Export, check fully, run in onnxruntime and compare with TF's own outputs."""
    proto = proto_of(onnxport.export_model(obj, tuple(xs), **options))
    if expected is None:
        out = obj(*xs, training=False) if isinstance(obj, keras.layers.Layer) else obj(*xs)
        expected = [np.asarray(t) for t in tf.nest.flatten(out)]
    got = run_ort(proto, *xs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return proto


# -- the API: what export_model accepts ------------------------------------------------------------
def test_backend_for_claims_keras_and_tf_objects():
    assert onnxport.backend_for(keras.layers.Dense(2)) == "tensorflow"
    assert onnxport.backend_for(tf.function(lambda x: x)) == "tensorflow"
    assert onnxport.backend_for(tf.Module()) == "tensorflow"


def test_sequential_names_weights_by_keras_path():
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4, activation="relu", name="hidden"),
                              keras.layers.Dense(2, name="head")], name="mlp")
    proto = export_and_compare(model, [rand(3, 6)])
    assert sorted(i.name for i in proto.graph.initializer) == ["head/bias", "head/kernel", "hidden/bias", "hidden/kernel"]
    kernel = next(i for i in proto.graph.initializer if i.name == "hidden/kernel")
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(kernel), model.get_layer("hidden").kernel.numpy())


def test_functional_layer_used_twice_is_one_initializer():
    inp = keras.Input((5,), name="features")
    shared = keras.layers.Dense(5, name="shared")
    model = keras.Model(inp, shared(keras.activations.tanh(shared(inp))))
    proto = export_and_compare(model, [rand(2, 5)])
    assert sorted(i.name for i in proto.graph.initializer) == ["shared/bias", "shared/kernel"]
    assert ops(proto).count("Gemm") == 2  # each call: its MatMul and bias as one Gemm
    assert proto.graph.input[0].name == "features"


def test_subclassed_model():
    class Block(keras.Model):
        def __init__(self):
            super().__init__()
            self.proj = keras.layers.Dense(4, name="proj")
            self.norm = keras.layers.LayerNormalization(name="norm")

        def call(self, x):
            return self.norm(x + self.proj(x))

    model = Block()
    x = rand(2, 3, 4)
    model(x)
    proto = export_and_compare(model, [x])
    assert "LayerNormalization" in ops(proto)
    assert {"proj/kernel", "norm/gamma", "norm/beta"} <= {i.name for i in proto.graph.initializer}


def test_tf_function_and_tf_module():
    w = tf.Variable(rand(4, 3), name="closure_w")
    f = tf.function(lambda x: tf.tanh(tf.matmul(x, w)))
    proto = export_and_compare(f, [rand(2, 4)])
    assert [i.name for i in proto.graph.initializer] == ["closure_w"]

    class Mod(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(rand(4, 3), name="w")
            self.b = tf.Variable(rand(3), name="b")

        @tf.function
        def __call__(self, x):
            return tf.nn.relu(x @ self.w + self.b)

    proto = export_and_compare(Mod(), [rand(2, 4)])
    assert sorted(i.name for i in proto.graph.initializer) == ["b", "w"]


def test_unsupported_op_lists_every_missing_op():
    f = tf.function(lambda x: tf.math.cumsum(tf.math.bessel_i0(x), axis=1))
    with pytest.raises(UnsupportedOpError) as info:
        onnxport.export_model(f, (rand(2, 3),))
    assert "Cumsum" in str(info.value) and "BesselI0" in str(info.value)


# -- shapes and opsets ---------------------------------------------------------------------------------
def test_batch_is_symbolic_by_default_and_runs_at_other_batch_sizes():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    proto = proto_of(onnxport.export_model(model, (rand(2, 4),)))
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and dims[1].dim_value == 4
    x = rand(7, 4)
    np.testing.assert_allclose(run_ort(proto, x)[0], model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_dynamic_shapes_name_more_dims_and_static_shapes():
    f = tf.function(lambda x: tf.reduce_sum(x * 2.0, axis=-1))
    proto = proto_of(onnxport.export_model(f, (rand(2, 5),), dynamic_shapes=[{0: "n", 1: "length"}]))
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert (dims[0].dim_param, dims[1].dim_param) == ("n", "length")
    x = rand(3, 9)
    np.testing.assert_allclose(run_ort(proto, x)[0], f(x).numpy(), rtol=1e-5, atol=1e-6)
    proto = proto_of(onnxport.export_model(f, (rand(2, 5),), dynamic_shapes=[None]))
    assert [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim] == [2, 5]


@pytest.mark.parametrize("opset", [13, 17, 18, 21])
def test_opsets(opset):
    model = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3), keras.layers.GlobalAveragePooling2D(),
                              keras.layers.Dense(2), keras.layers.Softmax()])
    proto = export_and_compare(model, [rand(2, 6, 6, 2)], opset=opset)
    assert next(o.version for o in proto.opset_import if o.domain == "") == opset


# -- layout ---------------------------------------------------------------------------------------
def _cnn():
    return keras.Sequential([
        keras.Input((12, 12, 3)),
        keras.layers.Conv2D(8, 3, padding="same"), keras.layers.BatchNormalization(), keras.layers.ReLU(),
        keras.layers.DepthwiseConv2D(3, padding="same"), keras.layers.BatchNormalization(), keras.layers.ReLU(6.0),
        keras.layers.Conv2D(8, 1), keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(), keras.layers.Conv2D(4, 3, strides=2, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3),
    ])


def test_conv_chain_keeps_nhwc_input_and_one_transpose():
    model = _cnn()
    x = rand(2, 12, 12, 3)
    proto = export_and_compare(model, [x], rtol=1e-4, atol=1e-4)
    kinds = ops(proto)
    assert kinds.count("Conv") == 4 and kinds.count("BatchNormalization") == 3
    assert kinds.count("Transpose") == 1  # the NHWC input; the global pool reads NCHW directly
    assert [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim][1:] == [12, 12, 3]
    # biases joined their Conv, kernels are stored OIHW under the Keras path
    convs = [n for n in proto.graph.node if n.op_type == "Conv"]
    assert all(len(n.input) == 3 and n.input[1].endswith("/kernel") and n.input[2].endswith("/bias") for n in convs)
    kernel = next(i for i in proto.graph.initializer if i.name == convs[0].input[1])
    assert list(kernel.dims) == [8, 3, 3, 3]
    conv_outputs = {n.output[0] for n in convs}
    assert not any(n.op_type == "Add" and set(n.input) & conv_outputs for n in proto.graph.node)


def test_conv_then_flatten_has_one_transpose_pair():
    model = keras.Sequential([keras.Input((8, 8, 2)), keras.layers.Conv2D(4, 3, activation="relu"),
                              keras.layers.Conv2D(4, 3), keras.layers.Flatten(), keras.layers.Dense(2)])
    proto = export_and_compare(model, [rand(2, 8, 8, 2)])
    assert ops(proto).count("Transpose") == 2  # into NCHW at the input, back to NHWC before Flatten


def test_inputs_as_nchw():
    model = _cnn()
    x = rand(2, 12, 12, 3)
    expected = [model(x).numpy()]
    proto = proto_of(onnxport.export_model(model, (x,), inputs_as_nchw=[0]))
    assert [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim][1:] == [3, 12, 12]
    assert "Transpose" not in ops(proto)
    np.testing.assert_allclose(run_ort(proto, np.transpose(x, (0, 3, 1, 2)))[0], expected[0], rtol=1e-4, atol=1e-4)


def test_layout_pass_cancels_through_residual_add_and_concat():
    inp = keras.Input((8, 8, 4))
    a = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    b = keras.layers.Conv2D(4, 3, padding="same")(a)
    s = keras.layers.Add()([a, b])
    c = keras.layers.Concatenate()([s, a])
    out = keras.layers.Conv2D(2, 1)(keras.layers.ReLU()(c))
    model = keras.Model(inp, out)
    proto = export_and_compare(model, [rand(2, 8, 8, 4)])
    assert ops(proto).count("Transpose") == 2  # graph input in, graph output out


def test_zero_padding_joins_conv_and_max_pool_pads():
    """ResNet's stem: ZeroPadding2D before a Conv (through the NHWC->NCHW Transpose) and before a
    MaxPooling2D of ReLU outputs become the ops' own pads; constants are initializers, no nodes."""
    model = keras.Sequential([
        keras.Input((16, 16, 3)), keras.layers.ZeroPadding2D(3), keras.layers.Conv2D(4, 7, strides=2),
        keras.layers.BatchNormalization(), keras.layers.ReLU(), keras.layers.ZeroPadding2D(1),
        keras.layers.MaxPooling2D(3, strides=2), keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3),
    ])
    proto = export_and_compare(model, [rand(2, 16, 16, 3)], rtol=1e-4, atol=1e-5)
    kinds = ops(proto)
    assert "Pad" not in kinds and "Constant" not in kinds and kinds.count("Transpose") == 1
    pads = {n.op_type: list(next(a.ints for a in n.attribute if a.name == "pads")) for n in proto.graph.node
            if n.op_type in ("Conv", "MaxPool")}
    assert pads == {"Conv": [3, 3, 3, 3], "MaxPool": [1, 1, 1, 1]}
    assert "Gemm" in kinds  # the Dense's MatMul and bias


def test_dense_on_sequences_is_one_matmul():
    """Keras Dense on rank-3 inputs traces as Tensordot (Reshape, MatMul, Reshape with shapes
    computed from the symbolic batch): it exports as one MatMul and runs at other batch sizes."""
    model = keras.Sequential([keras.Input((5, 8)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(4)])
    proto = export_and_compare(model, [rand(2, 5, 8)])
    assert ops(proto) == ["MatMul", "Add", "Relu", "MatMul", "Add"]
    x = rand(3, 5, 8)
    np.testing.assert_allclose(run_ort(proto, x)[0], model(x).numpy(), rtol=1e-4, atol=1e-5)


# -- recurrent layers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("layer, node", [
    (lambda: keras.layers.LSTM(5), "LSTM"),
    (lambda: keras.layers.LSTM(5, return_sequences=True), "LSTM"),
    (lambda: keras.layers.GRU(5), "GRU"),
    (lambda: keras.layers.GRU(5, reset_after=False, return_sequences=True), "GRU"),
    (lambda: keras.layers.Bidirectional(keras.layers.LSTM(5, return_sequences=True)), "LSTM"),
    (lambda: keras.layers.Bidirectional(keras.layers.GRU(5), merge_mode="ave"), "GRU"),
])
def test_recurrent_layer_is_one_node(layer, node):
    model = keras.Sequential([keras.Input((6, 3)), layer(), keras.layers.Dense(2)])
    proto = export_and_compare(model, [rand(2, 6, 3)], rtol=1e-4, atol=1e-5)
    assert ops(proto).count(node) == 1
    assert not {"Loop", "Scan"} & set(ops(proto))


def test_stacked_lstm_names_and_batch():
    model = keras.Sequential([keras.Input((6, 3)), keras.layers.LSTM(4, return_sequences=True, name="l1"),
                              keras.layers.LSTM(4, name="l2")])
    proto = export_and_compare(model, [rand(2, 6, 3)])
    names = {i.name for i in proto.graph.initializer}
    assert {"l1/lstm_cell/kernel", "l1/lstm_cell/recurrent_kernel", "l1/lstm_cell/bias"} <= names
    x = rand(5, 6, 3)
    np.testing.assert_allclose(run_ort(proto, x)[0], model(x).numpy(), rtol=1e-4, atol=1e-5)


def test_recurrent_layers_with_symbolic_time():
    """Recurrent layers are traced as stand-ins of their output shape: a symbolic time dim stays
    symbolic, and the export runs at other lengths."""
    model = keras.Sequential([keras.Input((None, 3)), keras.layers.LSTM(4, return_sequences=True),
                              keras.layers.Bidirectional(keras.layers.GRU(3, return_sequences=True)),
                              keras.layers.Bidirectional(keras.layers.LSTM(2))])
    proto = export_and_compare(model, [rand(2, 6, 3)], dynamic_shapes=[{0: "batch", 1: "time"}])
    assert ops(proto).count("LSTM") == 2 and ops(proto).count("GRU") == 1
    x = rand(3, 9, 3)
    np.testing.assert_allclose(run_ort(proto, x)[0], model(x).numpy(), rtol=1e-4, atol=1e-5)


def test_lstm_with_mask_is_refused_clearly():
    inp = keras.Input((6, 3))
    out = keras.layers.LSTM(4)(keras.layers.Masking()(inp))
    with pytest.raises(onnxport.OnnxportError, match="mask"):
        onnxport.export_model(keras.Model(inp, out), (rand(2, 6, 3),))


# -- numerics of transformer pieces -------------------------------------------------------------------
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_mlp(approximate):
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16),
                              keras.layers.Lambda(lambda t: keras.activations.gelu(t, approximate=approximate)),
                              keras.layers.Dense(4), keras.layers.Softmax()])
    proto = export_and_compare(model, [rand(3, 8)], rtol=1e-5, atol=1e-6)
    assert ("Tanh" if approximate else "Erf") in ops(proto)


def test_transformer_block():
    inp = keras.Input((5, 8))
    att = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4, name="mha")(inp, inp)
    x = keras.layers.LayerNormalization(name="ln1")(inp + att)
    h = keras.layers.Dense(16, activation="gelu")(x)
    out = keras.layers.LayerNormalization(name="ln2")(x + keras.layers.Dense(8)(h))
    model = keras.Model(inp, out)
    proto = export_and_compare(model, [rand(2, 5, 8)], rtol=1e-4, atol=1e-5)
    assert ops(proto).count("LayerNormalization") == 2 and "Softmax" in ops(proto)
    assert "mha/query/kernel" in {i.name for i in proto.graph.initializer}


def test_inputs_as_nchw_rejects_unknown_names():
    with pytest.raises(InputError):
        onnxport.export_model(_cnn(), (rand(1, 12, 12, 3),), inputs_as_nchw=["nope"])
