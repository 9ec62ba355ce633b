"""Files onnxruntime refuses are refused by the core's checks, the same for every installed
backend, before any backend sees the model: declared types the graph contradicts, values read out
of scope, initializers whose data does not match their type, calls of local functions with more
inputs than declared."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxport
from onnxport import ModelError

F = T.FLOAT
BACKENDS = onnxport.backends()


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, inits=(), value_info=(), functions=(), opsets=(("", 21),)) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    return h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets], functions=list(functions))


def _chain(value_info=(), inits=(), second=("Neg", ["t"])) -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["x"], ["t"], name="relu"), h.make_node(second[0], second[1], ["y"], name="last")]
    return _model(nodes, [_vi("x", F, [3])], [_vi("y", F, [3])], inits, value_info)


def _constant_reshape(declared) -> onnx.ModelProto:
    nodes = [h.make_node("Constant", [], ["shape"], name="const", value=nh.from_array(np.array([3, 1], np.int64))),
             h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    return _model(nodes, [_vi("x", F, [3])], [_vi("y", F, [3, 1])], value_info=[declared])


def _out_of_scope(kind: str) -> onnx.ModelProto:
    if kind == "sibling_branch":  # the then-branch reads a value only the else-branch produces
        then = h.make_graph([h.make_node("Identity", ["inner"], ["t"])], "then", [], [_vi("t", F, [3])])
        other = h.make_graph([h.make_node("Neg", ["x"], ["inner"])], "else", [], [_vi("inner", F, [3])])
        return _model([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                      [_vi("c", T.BOOL, []), _vi("x", F, [3])], [_vi("y", F, [3])])
    # a Loop body reads a value produced inside its nested If's branch
    then = h.make_graph([h.make_node("Neg", ["s"], ["hidden"]), h.make_node("Identity", ["hidden"], ["o1"])], "it",
                        [], [_vi("o1", F, [3])])
    other = h.make_graph([h.make_node("Identity", ["s"], ["o2"])], "ie", [], [_vi("o2", F, [3])])
    body = h.make_graph([h.make_node("If", ["cond"], ["r"], then_branch=then, else_branch=other),
                         h.make_node("Add", ["r", "hidden"], ["s_out"]), h.make_node("Identity", ["cond"], ["cond_out"])],
                        "body", [_vi("i", T.INT64, []), _vi("cond", T.BOOL, []), _vi("s", F, [3])],
                        [_vi("cond_out", T.BOOL, []), _vi("s_out", F, [3])])
    return _model([h.make_node("Loop", ["n", "", "x"], ["y"], body=body)], [_vi("n", T.INT64, []), _vi("x", F, [3])],
                  [_vi("y", F, [3])])


def _bad_initializer(kind: str) -> onnx.ModelProto:
    w = onnx.TensorProto(name="w", data_type=F, dims=[3])
    if kind == "short_typed_field":
        w.float_data.extend([1.0, 2.0])
    elif kind == "raw_length":
        w.raw_data = b"\x00" * 10
    elif kind == "wrong_typed_field":
        w.int64_data.extend([1, 2, 3])
    else:  # data for another element type in raw bytes: int64 bytes for a float tensor
        w.raw_data = np.arange(3, dtype=np.int64).tobytes()
    return _chain(inits=[w], second=("Add", ["t", "w"]))


def _call_arity() -> onnx.ModelProto:
    fn = h.make_function("local", "twice", ["a"], ["b"], [h.make_node("Add", ["a", "a"], ["b"])], [h.make_opsetid("", 21)])
    return _model([h.make_node("twice", ["x", "x"], ["y"], domain="local", name="call")], [_vi("x", F, [3])],
                  [_vi("y", F, [3])], functions=[fn], opsets=(("", 21), ("local", 1)))


CASES = {
    "value_info_type_of_node_output": (_chain(value_info=[_vi("t", T.INT64, [3])]), "declares a type"),
    "value_info_shape_of_node_output": (_chain(value_info=[_vi("t", F, [5])]), "declares a type"),
    "out_of_scope_sibling_branch": (_out_of_scope("sibling_branch"), "'inner'"),
    "out_of_scope_nested_branch": (_out_of_scope("nested_branch"), "'hidden'"),
    "initializer_short_typed_field": (_bad_initializer("short_typed_field"), "'w'"),
    "initializer_raw_length": (_bad_initializer("raw_length"), "'w'"),
    "initializer_wrong_typed_field": (_bad_initializer("wrong_typed_field"), "'w'"),
    "initializer_raw_of_another_type": (_bad_initializer("raw_other_type"), "'w'"),
    "function_call_with_extra_inputs": (_call_arity(), r"'call'.*local::twice with 2 inputs"),
}


#: a contradiction onnxruntime lets through (it merges a declared shape leniently); the core refuses
#: it (strict=False: what the graph computes wins)
ORT_LENIENT = {"value_info_shape_of_node_output"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_by_the_core_for_every_backend(backend: str, case: str) -> None:
    model, match = CASES[case]
    ort = pytest.importorskip("onnxruntime")
    if case not in ORT_LENIENT:
        with pytest.raises(Exception):  # noqa: B017 - onnxruntime's own exception types
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ModelError, match=match):
        onnxport.import_model(model, backend=backend)
    with pytest.raises(ModelError, match=match):
        onnxport.prepare(model, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("declared", [("BOOL", T.BOOL, [2]), ("INT64 [7]", T.INT64, [7]), ("INT64 []", T.INT64, [])])
def test_a_constant_declared_otherwise_loads_with_its_own_type(backend: str, declared) -> None:
    """The model builder's files: onnxruntime runs them, the constant's tensor wins, a warning names it."""
    text, elem, shape = declared
    model = _constant_reshape(_vi("shape", elem, shape))
    ort = pytest.importorskip("onnxruntime")
    x = np.array([1.0, -2.0, 3.0], np.float32)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    with pytest.warns(UserWarning, match=rf"'shape' as {re.escape(text)}.*'const'.*own type is used"):
        imported = onnxport.import_model(model, backend=backend)
    np.testing.assert_array_equal(np.asarray(onnxport.get_backend(backend).run(imported, [x])[0]), want)
