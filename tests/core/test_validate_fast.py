"""The load checks' shortcuts agree with the full checks: a tensor :func:`plain_raw_ok` accepts
passes :func:`check_tensor`; the one-walk check spells the default domain ``""`` everywhere and
names text that is not UTF-8 as the per-field check does."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxport.errors import ModelError
from onnxport.ir import io as _io
from onnxport.ir import validate
from onnxport_testkit import fuzz
from onnxport_testkit.light import light_models


def _crafted() -> list[TensorProto]:
    """Tensors of every data type with raw_data of the right, a short and a long length, and the
    shapes of trouble: negative and zero dims, external data, data in two fields."""
    out = []
    for code in sorted(validate._KNOWN_DTYPES):
        for dims in ([], [3], [2, 0], [2, -1], [1, 5, 2]):
            numel = int(np.prod([max(d, 0) for d in dims])) if dims else 1
            need = (numel * validate._bits(code) + 7) // 8
            for extra in (0, -1, 1):
                t = TensorProto(name="t", data_type=code, dims=dims)
                t.raw_data = b"\x01" * max(need + extra, 0)
                out.append(t)
    mixed = numpy_helper.from_array(np.ones(3, np.float32), "mixed")
    mixed.float_data.append(1.0)
    external = numpy_helper.from_array(np.ones(3, np.float32), "external")
    external.data_location = TensorProto.EXTERNAL
    unknown = numpy_helper.from_array(np.ones(3, np.float32), "unknown")
    unknown.data_type = 999
    return [*out, mixed, external, unknown]


def _agrees(tensor: TensorProto) -> bool:
    """Whether the shortcut took the tensor (and then the full check must accept it)."""
    if not validate.plain_raw_ok(tensor):
        return False
    validate.check_tensor(tensor, "test")  # raises where the shortcut was wrong
    return True


def test_plain_raw_ok_accepts_only_what_check_tensor_accepts():
    tensors = _crafted()
    assert sum(_agrees(t) for t in tensors) > 20  # the right lengths of the whole-byte types
    wrong_length = [t for t in tensors if t.data_type in validate._KNOWN_DTYPES and min(t.dims, default=0) >= 0
                    and len(t.raw_data) != validate.tensor_nbytes(t)]
    assert wrong_length and not any(validate.plain_raw_ok(t) for t in wrong_length)


def test_plain_raw_ok_on_fuzzed_and_light_model_tensors():
    taken = 0
    for index in range(300):
        case, _ = fuzz.make_case(index, 0)
        if case.raw is None:
            taken += sum(_agrees(t) for t, _ in validate.all_tensors(case.proto))
    assert taken > 100
    proto = onnx.load(str(light_models()["squeezenet"]), load_external_data=False)
    assert all(_agrees(t) for t in proto.graph.initializer)  # the common weights take the shortcut


def _model_with_ai_onnx_everywhere() -> onnx.ModelProto:
    body = helper.make_graph([helper.make_node("Identity", ["x"], ["o"], domain="ai.onnx")], "body", [],
                             [helper.make_tensor_value_info("o", TensorProto.FLOAT, [3])])
    fbody = helper.make_graph([helper.make_node("Identity", ["a"], ["fo"], domain="ai.onnx")], "fbody", [],
                              [helper.make_tensor_value_info("fo", TensorProto.FLOAT, [3])])
    function = helper.make_function(
        "local", "F", ["a"], ["o"],
        [helper.make_node("Relu", ["a"], ["r"], domain="ai.onnx"),
         helper.make_node("If", ["c"], ["o"], domain="ai.onnx", then_branch=fbody, else_branch=fbody)],
        [helper.make_opsetid("ai.onnx", 21)])
    nodes = [helper.make_node("If", ["c"], ["i"], domain="ai.onnx", then_branch=body, else_branch=body),
             helper.make_node("F", ["i"], ["y"], domain="local")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx", 21), helper.make_opsetid("local", 1)],
                             functions=[function])


def test_ai_onnx_domain_is_spelled_empty_everywhere():
    model = _model_with_ai_onnx_everywhere()
    validate.check_model(model)
    domains = [imp.domain for imp in (*model.opset_import, *model.functions[0].opset_import)]
    nodes = [n for g in (model.graph, model.graph.node[0].attribute[0].g, model.graph.node[0].attribute[1].g) for n in g.node]
    nodes += list(model.functions[0].node)
    nodes += [n for a in model.functions[0].node[1].attribute for n in a.g.node]
    assert "ai.onnx" not in domains
    assert [n.domain for n in nodes if n.op_type != "F"] == [""] * (len(nodes) - 1)


@pytest.mark.parametrize("where", ["function opset", "function subgraph"])
def test_a_callers_proto_stays_as_it_was(where):
    """``"ai.onnx"`` only in a function's opset import, or only in a subgraph of a function's node:
    the check works on a copy, the caller's proto keeps its spelling."""
    model = _model_with_ai_onnx_everywhere()
    model.opset_import[0].domain = ""
    for n in (*model.graph.node, *model.graph.node[0].attribute[0].g.node, *model.graph.node[0].attribute[1].g.node,
              *model.functions[0].node):
        n.domain = "" if n.domain == "ai.onnx" else n.domain
    if where == "function subgraph":
        model.functions[0].opset_import[0].domain = ""
    else:
        for a in model.functions[0].node[1].attribute:
            a.g.node[0].domain = ""
    before = model.SerializeToString()
    assert validate.needs_rewrite(model)
    _io.load_proto(model)
    assert model.SerializeToString() == before


@pytest.mark.parametrize("field", ["input", "output", "name", "attribute"])
def test_text_that_is_not_utf8_is_named(field):
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="nodename", alpha=0.1)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    marker = {"input": b"\x0a\x01x", "output": b"\x12\x01y", "name": b"nodename", "attribute": b"alpha"}[field]
    data = node.SerializeToString()
    assert data.count(marker) == 1
    model.graph.node[0].ParseFromString(data.replace(marker, marker[:-1] + b"\xff"))
    with pytest.raises(ModelError, match=r"graph 'g' has a name, op type or domain that is not valid UTF-8: b'.*\\xff"):
        validate.check_model(model)
