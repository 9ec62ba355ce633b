"""Malformed graphs are refused before any backend sees them, with the problem named."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

import onnxport
from onnxport.errors import ModelError, UnsupportedOpError

from ..conftest import make_model, tensor_info


def test_cycle_is_reported(relu_model):
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2")]
    model = make_model(nodes, [tensor_info("x", [1])], [tensor_info("b", [1])])
    with pytest.raises(ModelError, match="cycle"):
        onnxport.prepare(model)


def test_a_node_reading_its_own_output_is_a_cycle():
    nodes = [helper.make_node("Add", ["x", "a"], ["a"], name="loop")]
    model = make_model(nodes, [tensor_info("x", [1])], [tensor_info("a", [1])])
    with pytest.raises(ModelError, match="cycle"):
        onnxport.prepare(model)


def test_nodes_listed_out_of_order_are_sorted():
    nodes = [helper.make_node("Neg", ["a"], ["y"], name="second"), helper.make_node("Relu", ["x"], ["a"], name="first")]
    plan = onnxport.prepare(make_model(nodes, [tensor_info("x", [1])], [tensor_info("y", [1])]))
    assert [n.name for n in plan.model.graph] == ["first", "second"]


def test_missing_initializer_names_node_and_value():
    model = make_model([helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")],
                       [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(ModelError, match=r"'add_bias'.*'bias'.*missing initializer"):
        onnxport.prepare(model)


def test_unknown_domain_is_reported():
    model = make_model([helper.make_node("Frobnicate", ["x"], ["y"], name="f", domain="com.example")],
                       [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(ModelError, match="com.example"):
        onnxport.prepare(model)


def test_unsupported_ops_listed_together():
    nodes = [
        helper.make_node("Frob", ["x"], ["a"], name="f1", domain="com.example"),
        helper.make_node("Frob", ["a"], ["b"], name="f2", domain="com.example"),
        helper.make_node("Zork", ["b"], ["y"], name="z1", domain="com.example"),
    ]
    model = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])], domains=[("com.example", 1)])
    with pytest.raises(UnsupportedOpError) as info:
        onnxport.import_model(model, backend="torch")
    msg = str(info.value)
    assert "com.example::Frob" in msg and "com.example::Zork" in msg
    assert "'f1'" in msg and "'f2'" in msg and "'z1'" in msg
    assert {m[1] for m in info.value.missing} == {"Frob", "Zork"}


def test_unknown_attribute_and_missing_required_attribute():
    bad = make_model([helper.make_node("Relu", ["x"], ["y"], name="r", alpha=1.0)],
                     [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(ModelError, match="alpha"):
        onnxport.import_model(bad, backend="torch")
    no_perm = make_model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat")],
                         [tensor_info("x", [2])], [tensor_info("y", [4])])
    with pytest.raises(ModelError, match="axis"):
        onnxport.import_model(no_perm, backend="torch")


def test_unknown_backend():
    with pytest.raises(onnxport.BackendNotFoundError, match="not installed"):
        onnxport.import_model(make_model([], [tensor_info("x", [1])], [tensor_info("x", [1])]), backend="nope")


def test_caller_model_is_not_modified(mlp_model):
    ir_model = onnxport.load(mlp_model)
    before = [(n.op_type, len(n.inputs)) for n in ir_model.graph]
    onnxport.import_model(ir_model, backend="torch")
    assert [(n.op_type, len(n.inputs)) for n in ir_model.graph] == before
    _ = np, numpy_helper


@pytest.mark.parametrize("dims", [[-1, 3], [2, -7]])
def test_a_graph_input_with_a_negative_dim_loads_as_unknown(dims):
    """onnxruntime reads a negative input dimension as unknown; so does the import, with a warning,
    and the caller's proto keeps its declaration."""
    model = make_model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                       [tensor_info("x", dims)], [tensor_info("y", [2, 3])])
    with pytest.warns(UserWarning, match=rf"graph input 'x' declares dimension {dims.index(min(dims))} as "
                                         rf"{min(dims)}.*read as unknown"):
        plan = onnxport.prepare(model)
    shape = plan.model.graph.inputs[0].shape
    assert shape is not None and not isinstance(shape[dims.index(min(dims))], int)
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == dims
    imported = onnxport.import_model(model, backend="torch")
    import torch

    x = -np.arange(6, dtype=np.float32).reshape(2, 3) + 2
    np.testing.assert_array_equal(imported(torch.from_numpy(x)).numpy(), np.maximum(x, 0))
