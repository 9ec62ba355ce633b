"""The TensorFlow backend on whole models: tf.Module facts, SavedModel, GradientTape, Keras,
bad input, transformers."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

tf = pytest.importorskip("tensorflow")
ort = pytest.importorskip("onnxruntime")

import onnxport  # noqa: E402
from onnxport.errors import ConversionError, InputError  # noqa: E402
from onnxport_tensorflow import TfModel  # noqa: E402


def _ort(model: onnx.ModelProto | bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    data = model if isinstance(model, bytes) else model.SerializeToString()
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _model(nodes, inputs, outputs, initializers=(), opset=21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


@pytest.fixture(scope="module")
def mlp() -> onnx.ModelProto:
    """x[N,4] -> Gemm(W1,b1) -> Relu -> MatMul(W2) -> y[N,3] and the hidden h; a Reshape shape
    initializer (not trainable)."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((8, 3)).astype(np.float32)
    shape = np.array([-1, 3], np.int64)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="act"),
        helper.make_node("MatMul", ["r", "w2"], ["m"], name="fc2"),
        helper.make_node("Reshape", ["m", "shape"], ["y"], name="flat"),
    ]
    return _model(
        nodes,
        [_vi("x", TensorProto.FLOAT, ["N", 4])],
        [_vi("y", TensorProto.FLOAT, ["N", 3]), _vi("h", TensorProto.FLOAT, ["N", 8])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(shape, "shape")],
    )


def _x(n: int = 5, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 4)).astype(np.float32)


# -- the tf.Module ---------------------------------------------------------------------------------
def test_weights_are_variables_named_after_initializers(mlp) -> None:
    model = onnxport.import_model(mlp, backend="tensorflow")
    assert isinstance(model, TfModel) and isinstance(model, tf.Module)
    assert set(model.weights) == {"w1", "b1", "w2"}  # the int64 shape stays a constant
    assert all(isinstance(v, tf.Variable) and v.trainable for v in model.weights.values())
    assert {v.name.split(":")[0] for v in model.trainable_variables} == {"w1", "b1", "w2"}
    np.testing.assert_array_equal(model.weights["w2"].numpy(), numpy_helper.to_array(mlp.graph.initializer[2]))


def test_call_is_a_tf_function_with_the_graph_signature(mlp) -> None:
    model = onnxport.import_model(mlp, backend="tensorflow")
    (spec,) = model.input_signature
    assert spec.shape.as_list() == [None, 4] and spec.dtype == tf.float32
    x = _x()
    y, h = model(x)  # several outputs: a tuple
    expected = _ort(mlp, {"x": x})
    np.testing.assert_allclose(y.numpy(), expected[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), expected[1], rtol=1e-5, atol=1e-5)
    y2, _ = model(x=tf.constant(_x(2, 3)))  # by ONNX name, another batch size: no retrace needed
    assert y2.shape == (2, 3)
    assert model.serve.experimental_get_tracing_count() == 1
    # the traced graph holds no Python-side shape work: the Reshape target is a constant
    graph = model.serve.get_concrete_function().graph
    assert "Shape" not in {op.type for op in graph.get_operations()}


def test_saved_model_round_trip(mlp, tmp_path) -> None:
    model = onnxport.import_model(mlp, backend="tensorflow")
    x = _x()
    before = [t.numpy() for t in model(x)]
    tf.saved_model.save(model, str(tmp_path / "sm"))
    loaded = tf.saved_model.load(str(tmp_path / "sm"))
    after = [t.numpy() for t in loaded(tf.constant(x))]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert sorted(loaded.weights) == sorted(model.weights)  # the variables come back by initializer name
    for k, v in model.weights.items():
        np.testing.assert_array_equal(loaded.weights[k].numpy(), v.numpy())


def test_gradient_tape_reaches_every_trainable_variable(mlp) -> None:
    model = onnxport.import_model(mlp, backend="tensorflow")
    x = tf.constant(_x(3, 2))
    w1, b1, w2 = (model.weights[k] for k in ("w1", "b1", "w2"))
    with tf.GradientTape() as tape:
        y, _ = model(x)
        loss = tf.reduce_sum(y ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)
    with tf.GradientTape() as tape:  # the same network written by hand
        ref = tf.reduce_sum((tf.nn.relu(x @ w1 + b1) @ w2) ** 2)
    ref_grads = tape.gradient(ref, model.trainable_variables)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-5)


def test_shared_initializer_is_one_variable_and_gradients_add_up() -> None:
    w = np.random.default_rng(4).standard_normal((3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="first"),
        helper.make_node("MatMul", ["a", "w"], ["y"], name="second"),
    ]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, [2, 3])], [_vi("y", TensorProto.FLOAT, [2, 3])],
                   [numpy_helper.from_array(w, "w")])
    model = onnxport.import_model(proto, backend="tensorflow")
    assert list(model.weights) == ["w"] and len(model.trainable_variables) == 1
    x = tf.constant(np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    (g,) = tape.gradient(loss, model.trainable_variables)
    wt = tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch(wt)
        ref = tf.reduce_sum(x @ wt @ wt)  # both uses contribute
    np.testing.assert_allclose(g.numpy(), tape.gradient(ref, wt).numpy(), rtol=1e-5, atol=1e-5)


def test_keras_layer_fine_tunes_the_same_variables(mlp) -> None:
    keras = pytest.importorskip("keras")
    model = onnxport.import_model(mlp, backend="tensorflow")
    layer = model.keras_layer()
    assert {id(v.value) for v in layer.trainable_variables} == {id(v) for v in model.trainable_variables}
    inp = keras.Input(shape=(4,), dtype="float32")
    y, _ = layer(inp)
    net = keras.Model(inp, y)
    net.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    target = (x @ rng.standard_normal((4, 3))).astype(np.float32)
    w_before = model.weights["w2"].numpy().copy()
    hist = net.fit(x, target, epochs=15, batch_size=16, verbose=0)
    losses = hist.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert not np.allclose(model.weights["w2"].numpy(), w_before)  # the imported model was trained
    np.testing.assert_allclose(model(x)[0].numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)


# -- bad input ---------------------------------------------------------------------------------------
def test_bad_input_gives_the_input_errors_of_every_backend(mlp) -> None:
    model = onnxport.import_model(mlp, backend="tensorflow")
    with pytest.raises(InputError, match="dtype"):
        model(np.ones((1, 4), np.float64))
    with pytest.raises(InputError, match="missing"):
        model()
    with pytest.raises(InputError, match="dimension 1"):
        model(np.ones((2, 5), np.float32))
    with pytest.raises(InputError, match="rank"):
        model(np.ones((4,), np.float32))
    with pytest.raises(InputError, match="unknown"):
        model(np.ones((1, 4), np.float32), z=1)


def test_unknown_op_names_the_node() -> None:
    proto = _model([helper.make_node("NoSuchOp", ["x"], ["y"], name="weird")],
                   [_vi("x", TensorProto.FLOAT, [2])], [_vi("y", TensorProto.FLOAT, [2])])
    with pytest.raises(onnxport.OnnxportError, match="NoSuchOp"):
        onnxport.import_model(proto, backend="tensorflow")


def test_a_failing_node_is_a_conversion_error_naming_it() -> None:
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"], name="bad_reshape")]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, [2, 3])], [_vi("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(np.array([4, 4], np.int64), "s")])
    with pytest.raises(ConversionError, match="bad_reshape"):
        model = onnxport.import_model(proto, backend="tensorflow")
        model(np.ones((2, 3), np.float32))


# -- transformers ------------------------------------------------------------------------------------
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


class _Wrap(torch.nn.Module):
    """Keyword call and a single tensor output, so the exporters see a plain function."""

    def __init__(self, model, key: str):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, input_ids, attention_mask=None):
        kwargs = {} if attention_mask is None else {"attention_mask": attention_mask}
        return getattr(self.model(input_ids=input_ids, **kwargs), self.key)


def _export(model, args, names, dynamo: bool) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not dynamo:
            buf = io.BytesIO()
            torch.onnx.export(model, args, buf, input_names=names, dynamo=False, opset_version=17,
                              dynamic_axes={n: {0: "batch", 1: "seq"} for n in names})
            return buf.getvalue()
        program = torch.onnx.export(model, args, input_names=names, dynamo=True, optimize=True, verbose=False)
        return program.model_proto.SerializeToString()


@pytest.fixture(scope="module")
def bert_onnx() -> bytes:
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
    ids = torch.randint(0, 100, (2, 8))
    return _export(_Wrap(transformers.BertModel(cfg).eval(), "last_hidden_state"), (ids, torch.ones_like(ids)),
                   ["input_ids", "attention_mask"], dynamo=False)


@pytest.fixture(scope="module")
def gpt2_onnx() -> bytes:
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False,
                                  attn_implementation="eager", bos_token_id=0, eos_token_id=0)
    return _export(_Wrap(transformers.GPT2LMHeadModel(cfg).eval(), "logits"), (torch.randint(0, 100, (2, 8)),),
                   ["input_ids"], dynamo=True)


@pytest.fixture(scope="module")
def t5_encoder_onnx() -> bytes:
    torch.manual_seed(0)
    cfg = transformers.T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                decoder_start_token_id=0, attn_implementation="eager")
    ids = torch.randint(0, 100, (2, 8))
    return _export(_Wrap(transformers.T5EncoderModel(cfg).eval(), "last_hidden_state"), (ids, torch.ones_like(ids)),
                   ["input_ids", "attention_mask"], dynamo=False)


def _traced(model: TfModel, *inputs: np.ndarray) -> np.ndarray:
    """The model run inside an outer ``tf.function`` (graph mode end to end)."""
    return tf.function(lambda *xs: model(*xs))(*[tf.constant(x) for x in inputs]).numpy()


def test_bert_matches_onnxruntime_in_tf_function(bert_onnx: bytes) -> None:
    model = onnxport.import_model(bert_onnx, backend="tensorflow")
    rng = np.random.default_rng(6)
    ids = rng.integers(0, 100, (2, 8)).astype(np.int64)
    mask = np.ones((2, 8), np.int64)
    mask[1, 5:] = 0
    ours = _traced(model, ids, mask)
    expected = _ort(bert_onnx, {"input_ids": ids, "attention_mask": mask})[0]
    assert ours.shape == expected.shape == (2, 8, 32)
    assert np.abs(ours - expected).max() < 1e-4
    assert any("word_embeddings" in k for k in model.weights)
    ids3 = rng.integers(0, 100, (3, 5)).astype(np.int64)  # another batch and length: dynamic dims
    mask3 = np.ones((3, 5), np.int64)
    ours3 = model(ids3, mask3).numpy()
    assert np.abs(ours3 - _ort(bert_onnx, {"input_ids": ids3, "attention_mask": mask3})[0]).max() < 1e-4


def test_gpt2_matches_onnxruntime_in_tf_function(gpt2_onnx: bytes) -> None:
    model = onnxport.import_model(gpt2_onnx, backend="tensorflow")
    ids = np.random.default_rng(7).integers(0, 100, (2, 8)).astype(np.int64)
    ours = _traced(model, ids)
    expected = _ort(gpt2_onnx, {"input_ids": ids})[0]
    assert ours.shape == expected.shape == (2, 8, 100)
    assert np.abs(ours - expected).max() < 1e-4


def test_t5_encoder_matches_onnxruntime_in_tf_function(t5_encoder_onnx: bytes) -> None:
    model = onnxport.import_model(t5_encoder_onnx, backend="tensorflow")
    rng = np.random.default_rng(9)
    ids = rng.integers(0, 100, (2, 8)).astype(np.int64)
    mask = np.ones((2, 8), np.int64)
    mask[0, 6:] = 0
    ours = _traced(model, ids, mask)
    expected = _ort(t5_encoder_onnx, {"input_ids": ids, "attention_mask": mask})[0]
    assert ours.shape == expected.shape == (2, 8, 32)
    assert np.abs(ours - expected).max() < 1e-4


def test_gpt2_fine_tunes_with_keras_fit(gpt2_onnx: bytes) -> None:
    keras = pytest.importorskip("keras")
    model = onnxport.import_model(gpt2_onnx, backend="tensorflow")
    layer = model.keras_layer()
    inp = keras.Input(shape=(8,), dtype="int64", batch_size=2)
    net = keras.Model(inp, layer(inp))
    net.compile(optimizer=keras.optimizers.Adam(1e-2),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(10)
    ids = rng.integers(0, 100, (8, 8)).astype(np.int64)
    target = np.roll(ids, -1, axis=1)  # next-token prediction on a fixed batch
    losses = net.fit(ids, target, epochs=6, batch_size=2, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


def test_batchnorm_statistics_are_non_trainable_variables() -> None:
    """BatchNormalization's running mean and variance: variables that training mode updates,
    outside ``trainable_variables`` (and the Keras layer's)."""
    rng = np.random.default_rng(0)
    w = {"scale": rng.uniform(0.5, 1.5, 3), "bias": rng.standard_normal(3), "mean": rng.standard_normal(3),
         "var": rng.uniform(0.5, 2.0, 3)}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                              momentum=0.9, epsilon=1e-5)]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, ["N", 3, 4, 4])], [_vi("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(v, k) for k, v in w.items()], opset=15)
    model = onnxport.import_model(proto, backend="tensorflow")
    assert {v.name.split(":")[0] for v in model.trainable_variables} == {"scale", "bias"}
    assert {v.name.split(":")[0] for v in model.non_trainable_variables} >= {"mean", "var"}
    layer = model.keras_layer()
    assert {v.name for v in layer.trainable_variables} == {"scale", "bias"}
    x = (rng.standard_normal((8, 3, 4, 4)) * 3 + 2).astype(np.float32)
    model.train()
    model(x)
    np.testing.assert_allclose(model.weights["mean"].numpy(), 0.9 * w["mean"] + 0.1 * x.mean(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-5)
