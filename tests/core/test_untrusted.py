"""Untrusted model files: each malformed part is refused at load with a ModelError naming it."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import onnxport
from onnxport.errors import ModelError, UnsafeModelError

from ..conftest import make_model, tensor_info


def _add_model(w: onnx.TensorProto, shape=(3,)) -> onnx.ModelProto:
    return make_model([helper.make_node("Add", ["x", w.name], ["y"], name="add")],
                      [tensor_info("x", list(shape))], [tensor_info("y", list(shape))], [w])


def _w(values=(1.0, 2.0, 3.0), name="w") -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


# -- tensors -------------------------------------------------------------------------------
@pytest.mark.parametrize("raw", [b"\x00" * 11, b"\x00" * 13, b"\x00" * 4])
def test_raw_data_length_differs_from_shape(raw):
    w = _w()
    w.raw_data = raw
    with pytest.raises(ModelError, match=rf"tensor 'w'.*FLOAT \[3\].*raw_data holds {len(raw)} bytes.*need 12"):
        onnxport.load(_add_model(w))


def test_typed_field_that_does_not_match_the_data_type():
    w = helper.make_tensor("w", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    w.data_type = TensorProto.INT64
    with pytest.raises(ModelError, match=r"tensor 'w'.*INT64.*float_data.*int64_data"):
        onnxport.load(_add_model(w))


def test_typed_field_with_wrong_count():
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    w.dims[0] = 3
    with pytest.raises(ModelError, match=r"'w'.*float_data holds 2 values, the shape needs 3"):
        onnxport.load(_add_model(w))


def test_negative_dim_and_unknown_dtype():
    w = _w()
    w.dims[0] = -3
    with pytest.raises(ModelError, match="'w'.*negative dimension"):
        onnxport.load(_add_model(w))
    w = _w()
    w.data_type = 99
    with pytest.raises(ModelError, match="'w'.*data type 99 is not an ONNX data type"):
        onnxport.load(_add_model(w))


def test_tensor_without_data_is_refused_not_zero_filled():
    w = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4096, 8192])
    with pytest.raises(ModelError, match=r"'w'.*\[4096, 8192\].*holds no data"):
        onnxport.load(_add_model(w, (4096, 8192)))
    empty = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[0])
    onnxport.load(_add_model(empty, (0,)))  # an empty tensor needs no data


def test_constant_value_and_attribute_tensors_are_checked():
    bad = _w(name="cval")
    bad.raw_data = bad.raw_data[:-1]
    model = make_model([helper.make_node("Constant", [], ["c"], name="const", value=bad),
                        helper.make_node("Add", ["x", "c"], ["y"], name="add")],
                       [tensor_info("x", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match=r"'cval'.*node 'const' \(Constant\) 'value'.*raw_data holds 11"):
        onnxport.load(model)


# -- names ---------------------------------------------------------------------------------
def test_duplicate_graph_inputs_and_initializers_are_refused():
    model = make_model([helper.make_node("Add", ["x", "x"], ["y"])], [tensor_info("x", [3]), tensor_info("x", [3])],
                       [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="two graph inputs are named 'x'"):
        onnxport.load(model)
    model = _add_model(_w())
    model.graph.initializer.append(_w((0.0, 0.0, 0.0)))
    with pytest.raises(ModelError, match="two initializers are named 'w'"):
        onnxport.load(model)


def test_value_produced_twice_and_empty_input_name():
    model = make_model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])],
                       [tensor_info("x", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="value 'y' is produced twice"):
        onnxport.load(model)
    model = make_model([helper.make_node("Relu", [""], ["y"])], [tensor_info("", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="empty name"):
        onnxport.load(model)


# -- schema --------------------------------------------------------------------------------
def test_attribute_types_are_checked_against_the_op_spec():
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=3)],
                       [tensor_info("x", [1, 1, 4, 4]), tensor_info("w", [1, 1, 3, 3])], [tensor_info("y", None)])
    with pytest.raises(ModelError, match=r"'conv'.*'kernel_shape' is INT, Conv-\d+ defines it as INTS"):
        onnxport.load(model)
    gemm = helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm")
    gemm.attribute.append(helper.make_attribute("transB", "yes"))
    model = make_model([gemm], [tensor_info("a", [2, 2]), tensor_info("b", [2, 2])], [tensor_info("y", [2, 2])])
    with pytest.raises(ModelError, match="'transB' is STRING.*INT"):
        onnxport.load(model)


def test_attribute_the_op_does_not_define_is_refused_at_load_before_shape_inference():
    """A Constant given ``transB = 2**40``: onnx's shape inference spent 35 s and 5 GB on it; the
    load refuses it first (onnxruntime refuses it too)."""
    value = helper.make_tensor("v", TensorProto.INT64, [2], [1, 2])
    node = helper.make_node("Constant", [], ["c"], name="const", value=value, transB=2**40)
    model = make_model([node, helper.make_node("Add", ["x", "c"], ["y"], name="add")],
                       [tensor_info("x", [2], TensorProto.INT64)], [tensor_info("y", [2], TensorProto.INT64)])
    with pytest.raises(ModelError, match=r"'const'.*attribute 'transB', which Constant-\d+ does not define"):
        onnxport.load(model)
    ml = helper.make_node("Normalizer", ["x"], ["y"], name="norm", domain="ai.onnx.ml", norm="MAX", bogus=1)
    model = make_model([ml], [tensor_info("x", [1, 2])], [tensor_info("y", [1, 2])],
                       domains=[("ai.onnx.ml", 3)])
    with pytest.raises(ModelError, match=r"'norm'.*attribute 'bogus', which Normalizer-1 does not define"):
        onnxport.load(model)


def test_duplicate_attribute_and_ref_attr_outside_function():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="lr", alpha=0.1)
    node.attribute.append(helper.make_attribute("alpha", 0.2))
    model = make_model([node], [tensor_info("x", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="'lr'.*attribute 'alpha' more than once"):
        onnxport.load(model)
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="lr")
    node.attribute.append(AttributeProto(name="alpha", ref_attr_name="a", type=AttributeProto.FLOAT))
    model = make_model([node], [tensor_info("x", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="refers to 'a'.*only allowed inside a function"):
        onnxport.load(model)


def test_wrong_number_of_inputs():
    model = make_model([helper.make_node("Gemm", ["a"], ["y"], name="g")], [tensor_info("a", [2, 2])],
                       [tensor_info("y", [2, 2])])
    with pytest.raises(ModelError, match="'g'.*has 1 inputs; Gemm-13 takes 2 to 3"):
        onnxport.load(model)


def test_if_and_loop_bodies_must_match_the_node():
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [tensor_info("t", [3])])
    else_g = helper.make_graph([], "else", [], [])
    model = make_model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
                       [tensor_info("c", [], TensorProto.BOOL), tensor_info("x", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="'if'.*else_branch has 0 outputs, the If node 1"):
        onnxport.load(model)
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["co"]), helper.make_node("Identity", ["v"], ["vo"])],
                             "body", [tensor_info("c", [], TensorProto.BOOL), tensor_info("v", [3])],
                             [tensor_info("co", [], TensorProto.BOOL), tensor_info("vo", [3])])
    model = make_model([helper.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body)],
                       [tensor_info("n", [], TensorProto.INT64), tensor_info("x", [3])], [tensor_info("y", [3])])
    with pytest.raises(ModelError, match="'loop'.*body takes 2 inputs.*must take 3"):
        onnxport.load(model)


@pytest.mark.parametrize("version", [999, 2**31 + 1, 0, -1])
def test_opsets_past_onnx_or_int32_are_refused(version):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor_info("x", [3])], [tensor_info("y", [3])])
    model.opset_import[0].version = version
    with pytest.raises(ModelError, match=rf"{version}.*(out of range|knows opsets up to)"):
        onnxport.load(model)


def test_default_domain_spelled_ai_onnx_loads():
    model = make_model([helper.make_node("Relu", ["x"], ["y"], domain="ai.onnx")], [tensor_info("x", [3])],
                       [tensor_info("y", [3])])
    model.opset_import[0].domain = "ai.onnx"
    loaded = onnxport.load(model)
    assert loaded.opset_imports[""] == 21
    onnxport.prepare(model)


def test_recursive_functions_are_refused():
    f = helper.make_function("local", "F", ["a"], ["o"], [helper.make_node("G", ["a"], ["o"], domain="local")],
                             [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)])
    g = helper.make_function("local", "G", ["a"], ["o"], [helper.make_node("F", ["a"], ["o"], domain="local")],
                             [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)])
    model = make_model([helper.make_node("F", ["x"], ["y"], domain="local")], [tensor_info("x", [3])],
                       [tensor_info("y", [3])], domains=[("local", 1)])
    model.functions.extend([f, g])
    with pytest.raises(ModelError, match="recursively: local::F -> local::G -> local::F"):
        onnxport.load(model)


def test_function_opset_must_be_the_models():
    f = helper.make_function("local", "F", ["a"], ["o"], [helper.make_node("Relu", ["a"], ["o"])],
                             [helper.make_opsetid("", 10)])
    model = make_model([helper.make_node("F", ["x"], ["y"], domain="local")], [tensor_info("x", [3])],
                       [tensor_info("y", [3])], domains=[("local", 1)])
    model.functions.append(f)
    with pytest.raises(ModelError, match="function local::F imports opset 10 of 'ai.onnx', the model 21"):
        onnxport.load(model)


# -- declared types --------------------------------------------------------------------------
def test_declared_type_contradicting_the_graph_is_refused_unless_not_strict():
    # a node output (a Constant's declared type loads with the constant's own: tests/core/test_model_checks.py)
    model = make_model([helper.make_node("Neg", ["x"], ["c"], name="c"),
                        helper.make_node("Add", ["x", "c"], ["y"], name="add")],
                       [tensor_info("x", [3])], [tensor_info("y", [3])])
    model.graph.value_info.append(tensor_info("c", [3], TensorProto.INT64))
    with pytest.raises(ModelError, match="contradicts.*strict=False"):
        onnxport.prepare(model)
    with pytest.warns(UserWarning, match="contradicts"):
        onnxport.prepare(model, strict=False)


# -- external data -------------------------------------------------------------------------
def _external(tmp_path, location="w.bin", data=None, length=None):
    w = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3], data_location=TensorProto.EXTERNAL)
    entries = [("location", location)] + ([("length", str(length))] if length is not None else [])
    for key, value in entries:
        e = w.external_data.add()
        e.key, e.value = key, value
    if data is not None:
        (tmp_path / "w.bin").write_bytes(data)
    path = tmp_path / "m.onnx"
    path.write_bytes(_add_model(w).SerializeToString())
    return path


@pytest.mark.parametrize(("location", "error", "match"), [
    ("a\x00b", UnsafeModelError, "null byte"),
    ("x" * 5000, UnsafeModelError, "longer than a file name"),
    ("w.bin/inner", ModelError, "cannot open"),
    ("w.bin/./././", ModelError, "'w'.*cannot open"),  # pathlib drops the dots, the OS does not
    ("w.bin/.", ModelError, "'w'.*cannot open"),
    ("absent.bin", ModelError, "does not exist"),
])
def test_external_locations_give_model_errors_never_oserror(tmp_path, location, error, match):
    path = _external(tmp_path, location, np.ones(3, np.float32).tobytes())
    with pytest.raises(error, match=match):
        onnxport.load(path)


def test_external_data_entry_that_is_not_utf8_is_a_model_error(tmp_path):
    path = _external(tmp_path, "QQQQQ.bin", np.ones(3, np.float32).tobytes())
    path.write_bytes(path.read_bytes().replace(b"QQQQQ", b"\xff\xfe\x80ab"))  # protobuf keeps it as bytes
    with pytest.raises(ModelError, match="external data of tensor 'w': an entry is not valid UTF-8"):
        onnxport.load(path)


def test_external_symlink_loop_and_hard_link(tmp_path):
    os.symlink("loop_b", tmp_path / "loop_a")
    os.symlink("loop_a", tmp_path / "loop_b")
    with pytest.raises(ModelError):
        onnxport.load(_external(tmp_path, "loop_a"))
    path = _external(tmp_path, "hard.bin", np.ones(3, np.float32).tobytes())
    os.link(tmp_path / "w.bin", tmp_path / "hard.bin")
    with pytest.raises(UnsafeModelError, match="hard links"):
        onnxport.load(path)


def test_external_length_must_equal_the_tensor_size(tmp_path):
    with pytest.raises(ModelError, match="length 8 differs from the 12 bytes"):
        onnxport.load(_external(tmp_path, data=np.ones(4, np.float32).tobytes(), length=8))
    with pytest.raises(ModelError, match="16 bytes, the tensor's type and shape need 12"):
        onnxport.load(_external(tmp_path, data=np.ones(4, np.float32).tobytes()))


def test_external_data_in_an_attribute_tensor(tmp_path):
    t = onnx.TensorProto(name="cv", data_type=TensorProto.FLOAT, dims=[3], data_location=TensorProto.EXTERNAL)
    e = t.external_data.add()
    e.key, e.value = "location", "missing.bin"
    model = make_model([helper.make_node("Constant", [], ["y"], value=t)], [], [tensor_info("y", [3])])
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(ModelError, match="'cv'.*does not exist"):
        onnxport.load(tmp_path / "m.onnx")


def test_a_model_loaded_with_external_data_prepares(tmp_path):
    path = _external(tmp_path, data=np.arange(3, dtype=np.float32).tobytes())
    model = onnxport.load(path)
    plan = onnxport.prepare(model)
    np.testing.assert_array_equal(plan.model.graph.initializers["w"].const_value.numpy(), [0, 1, 2])


# -- accepted as onnxruntime accepts them ------------------------------------------------------
def test_sparse_initializer_is_made_dense():
    values = numpy_helper.from_array(np.array([5.0, 7.0], np.float32), "w")
    indices = numpy_helper.from_array(np.array([0, 2], np.int64), "")
    model = _add_model(_w())
    del model.graph.initializer[:]
    model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [3]))
    loaded = onnxport.load(model)
    np.testing.assert_array_equal(loaded.graph.initializers["w"].const_value.numpy(), [5, 0, 7])
    indices = numpy_helper.from_array(np.array([0, 3], np.int64), "")
    model.graph.sparse_initializer[0].CopyFrom(helper.make_sparse_tensor(values, indices, [3]))
    with pytest.raises(ModelError, match="sparse initializer 'w'.*outside the shape"):
        onnxport.load(model)


def test_non_utf8_producer_keeps_initializers_as_initializers():
    model = _add_model(_w())
    model.producer_name = "QQQ"
    data = model.SerializeToString().replace(b"QQQ", b"\xff\xfe\x80")
    plan = onnxport.prepare(data)
    assert [v.name for v in plan.model.graph.inputs] == ["x"]
    assert "w" in plan.model.graph.initializers


# -- save ----------------------------------------------------------------------------------
def test_save_writes_external_data_on_request_beside_the_model(tmp_path):
    model = onnxport.load(_add_model(_w((1.0, 2.0, 3.0) * 100), (300,)))
    onnxport.save(model, tmp_path / "m.onnx", external_data=True)
    proto = onnx.load(tmp_path / "m.onnx", load_external_data=False)
    info = {e.key: e.value for e in proto.graph.initializer[0].external_data}
    assert info["location"] == "m.onnx.data" and (tmp_path / "m.onnx.data").is_file()
    back = onnxport.load(tmp_path / "m.onnx")
    np.testing.assert_array_equal(back.graph.initializers["w"].const_value.numpy(),
                                  np.asarray((1.0, 2.0, 3.0) * 100, np.float32))
    onnxport.save(model, tmp_path / "inline.onnx")
    assert not os.path.exists(tmp_path / "inline.onnx.data")


def test_save_goes_external_past_the_protobuf_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(onnxport.ir.io, "EXTERNAL_DATA_BYTES", 1000)  # the 2 GB rule, at a testable size
    model = onnxport.load(_add_model(_w(np.ones(400)), (400,)))
    onnxport.save(model, tmp_path / "m.onnx")
    assert (tmp_path / "m.onnx.data").stat().st_size == 1600
    with pytest.raises(ModelError, match="do not fit in one protobuf file"):
        onnxport.save(model, tmp_path / "n.onnx", external_data=False)


def test_deep_nested_if_as_ir_model_has_no_recursion_limit():
    """Protobuf cannot even hold this depth; an IR model can, and is refused without recursing."""
    x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([3]))
    c = ir.Value(name="c", type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    relu = ir.node("Relu", [x])
    inner = ir.Graph([], relu.outputs, nodes=[relu], name="g0")
    for i in range(1, 5000):
        neg = ir.node("Neg", [x])
        other = ir.Graph([], neg.outputs, nodes=[neg], name=f"e{i}")
        node = ir.node("If", [c], attributes={"then_branch": inner, "else_branch": other})
        if i == 4999:
            break
        inner = ir.Graph([], node.outputs, nodes=[node], name=f"g{i}")
    graph = ir.Graph([c, x], node.outputs, nodes=[node], name="main", opset_imports={"": 21})
    with pytest.raises(ModelError, match="nest more than 64 levels"):
        onnxport.prepare(ir.Model(graph, ir_version=10))


@pytest.mark.parametrize("in_attribute", [False, True])
@pytest.mark.parametrize("location", ["w.bin/./././", "w.bin/", "./w.bin/."])
def test_external_location_through_a_file_is_refused_by_every_backend(tmp_path, location, in_attribute):
    """A location that runs through a regular file: pathlib normalises it to the file, the OS
    refuses to open it; refused at load naming the tensor, for initializers and attribute tensors."""
    t = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3], data_location=TensorProto.EXTERNAL)
    e = t.external_data.add()
    e.key, e.value = "location", location
    (tmp_path / "w.bin").write_bytes(np.ones(3, np.float32).tobytes())
    if in_attribute:
        model = make_model([helper.make_node("Constant", [], ["y"], value=t)], [], [tensor_info("y", [3])])
    else:
        model = _add_model(t)
    onnx.save(model, tmp_path / "m.onnx")
    for backend in onnxport.backends():
        with pytest.raises(ModelError, match="'w'"):
            onnxport.import_model(str(tmp_path / "m.onnx"), backend=backend)
