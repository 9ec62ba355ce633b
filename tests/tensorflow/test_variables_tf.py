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
