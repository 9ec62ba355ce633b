"""Imported weights are `tf.Variable`s named after their initializers, under every way TF makes them."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxport

tf = pytest.importorskip("tensorflow", reason="the TensorFlow backend's tests run where tensorflow is installed")

from onnxport_tensorflow.variables import new_variable  # noqa: E402


def _add_chain(n: int) -> bytes:
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else f"v{i}"
        inits.append(numpy_helper.from_array(np.full((2,), i, np.float32), f"layer{i}.bias"))
        nodes.append(helper.make_node("Add", [prev, f"layer{i}.bias"], [out]))
        prev = out
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def test_each_weight_has_its_own_name_and_storage(tmp_path) -> None:
    model = onnxport.import_model(_add_chain(5), "tensorflow")
    names = [f"layer{i}.bias" for i in range(5)]
    assert [model.weights[k].name for k in names] == [k + ":0" for k in names]
    assert len({v._unique_id for v in model.weights.values()}) == 5
    assert all(v.trainable for v in model.weights.values())
    model.weights["layer0.bias"].assign([10.0, 10.0])  # one variable changes, the others do not
    np.testing.assert_array_equal(model.weights["layer1.bias"].numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(model(np.zeros(2, np.float32)).numpy(), [20.0, 20.0])
    tf.saved_model.save(model, str(tmp_path / "sm"))
    loaded = tf.saved_model.load(str(tmp_path / "sm"))
    assert [loaded.weights[k].name for k in names] == [k + ":0" for k in names]
    np.testing.assert_array_equal(loaded(np.zeros(2, np.float32)).numpy(), [20.0, 20.0])


@pytest.mark.parametrize("where", ["top", "name_scope", "strategy"])
def test_new_variable_names_it_wherever_it_is_made(where) -> None:
    import contextlib

    scope = {"top": contextlib.nullcontext(), "name_scope": tf.name_scope("outer"),
             "strategy": tf.distribute.OneDeviceStrategy("/cpu:0").scope()}[where]
    with scope:
        var = new_variable(np.arange(3, dtype=np.float32), name="block.w", trainable=False)
        ref = tf.Variable(np.zeros(3, np.float32), name="block.w", trainable=False)
    assert var.name == ref.name and type(var) is type(ref)
    assert not var.trainable
    np.testing.assert_array_equal(var.numpy(), [0.0, 1.0, 2.0])


def _state(var) -> dict:
    """A variable's Python-side state, less what differs between any two variables (its handle,
    unique id)."""
    return {k: repr(v) for k, v in vars(var).items() if k not in ("_handle", "_unique_id")}


@pytest.mark.parametrize("value", [np.arange(6, dtype=np.float32).reshape(2, 3), np.float64(2.5),
                                   np.array([True, False]), np.arange(3, dtype=np.int64),
                                   np.zeros((0, 4), np.float16)], ids=["f32", "f64-scalar", "bool", "i64", "empty"])
@pytest.mark.parametrize("trainable", [True, False])
def test_direct_variables_are_what_tf_variable_makes(value, trainable) -> None:
    var = new_variable(value, name="blk.w", trainable=trainable)
    ref = tf.Variable(value, name="blk.w", trainable=trainable)
    assert type(var) is type(ref) and _state(var) == _state(ref)
    assert var.name == "blk.w:0" and var.handle._name == "blk.w:0" and var.trainable == trainable
    assert var._unique_id.startswith("blk.w_") and var._unique_id != ref._unique_id
    assert var.handle._handle_data == ref.handle._handle_data
    assert var.handle._parent_trackable() is var
    np.testing.assert_array_equal(var.numpy(), ref.numpy())


def test_direct_variables_take_dtype_shape_and_callables() -> None:
    var = new_variable(lambda: tf.zeros((3, 2), tf.float32), name="filled", trainable=True, dtype=tf.float32,
                       shape=(3, 2))
    ref = tf.Variable(lambda: tf.zeros((3, 2), tf.float32), name="filled", trainable=True, dtype=tf.float32,
                      shape=(3, 2))
    assert _state(var) == _state(ref)
    loose = new_variable(np.zeros(2, np.float32), name="loose", trainable=True, shape=tf.TensorShape(None))
    loose.assign(np.zeros(5, np.float32))  # an unknown shape takes values of any shape, as in tf.Variable
    assert loose.shape.rank is None and loose.numpy().shape == (5,)
    with pytest.raises(ValueError):
        new_variable(np.zeros(2, np.float32), name="bad", trainable=True, shape=(3,))


def test_direct_variables_train_save_and_restore(tmp_path) -> None:
    model = onnxport.import_model(_add_chain(3), "tensorflow")
    x = tf.constant(np.ones(2, np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(model.trainable_variables) == 3 and all(g is not None for g in grads)
    np.testing.assert_allclose([g.numpy() for g in grads], [[8.0, 8.0]] * 3)  # y = x + 0 + 1 + 2 = 4
    ckpt = tf.train.Checkpoint(model=model)
    path = ckpt.write(str(tmp_path / "ckpt"))
    saved = {k: v.numpy().copy() for k, v in model.weights.items()}
    for v in model.weights.values():
        v.assign(v + 100.0)
    ckpt.read(path).assert_consumed()
    for k, v in model.weights.items():
        np.testing.assert_array_equal(v.numpy(), saved[k])
    names = {n for n, _ in tf.train.list_variables(path)}  # keyed by initializer name ("." escaped)
    assert {f"model/weights/layer{i}..bias/.ATTRIBUTES/VARIABLE_VALUE" for i in range(3)} <= names
    layer = model.keras_layer()
    assert [v.name for v in layer.trainable_variables] == [f"layer{i}.bias" for i in range(3)]
    layer.trainable_variables[0].assign([5.0, 5.0])  # Keras adopts the variable itself: same storage
    np.testing.assert_array_equal(model.weights["layer0.bias"].numpy(), [5.0, 5.0])
    ckpt.read(path)
    fresh = onnxport.import_model(_add_chain(3), "tensorflow")
    for v in fresh.weights.values():
        v.assign(v * 0.0)
    tf.train.Checkpoint(model=fresh).read(path).assert_consumed()  # restored into other variables by name
    np.testing.assert_array_equal(fresh(x).numpy(), model(x).numpy())


def test_variables_made_in_a_trace_or_a_creator_scope_are_tf_variables() -> None:
    seen = []

    def creator(next_creator, **kwargs):
        seen.append(kwargs["name"])
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        var = new_variable(np.ones(2, np.float32), name="scoped", trainable=True)
    assert seen and var.name == "scoped:0"  # the creator scope saw it: made by tf.Variable

    made = []

    @tf.function
    def build():
        if not made:
            made.append(new_variable(np.ones(2, np.float32), name="traced", trainable=False))
        return made[0].read_value()

    np.testing.assert_array_equal(build().numpy(), [1.0, 1.0])
    assert made[0].name == "traced:0" and not made[0].trainable


class _Records:
    """Collects the messages TensorFlow's Python logger emits."""

    def __init__(self):
        import logging

        self.messages: list[str] = []
        self.handler = logging.Handler()
        self.handler.emit = lambda record: self.messages.append(record.getMessage())

    def __enter__(self):
        tf.get_logger().addHandler(self.handler)
        return self.messages

    def __exit__(self, *exc):
        tf.get_logger().removeHandler(self.handler)


def test_importing_many_models_does_not_warn_of_retracing() -> None:
    x = np.zeros(2, np.float32)
    with _Records() as messages:
        for n in range(1, 9):  # eight models, each traced once
            onnxport.import_model(_add_chain(n), "tensorflow")(x)
    assert not [m for m in messages if "retracing" in m]
    model = onnxport.import_model(_add_chain(2), "tensorflow")
    with _Records() as messages:
        for _ in range(6):  # one model retraced call after call is still warned of
            model.train()
            model(x)
            model.eval()
            model(x)
    assert [m for m in messages if "retracing" in m]
