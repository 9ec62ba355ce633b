"""The short deserialization path (``onnxport.ir.deserialize``) builds what onnx-ir's deserializer
builds, and steps aside where it does not apply."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxport.errors import OnnxportError
from onnxport.ir import deserialize, validate
from onnxport_testkit import fuzz, fuzz_seeds
from onnxport_testkit.light import light_models


def _value(v: ir.Value | None) -> tuple | None:
    if v is None:
        return None
    const = v.const_value
    return (v.name, repr(v.type), None if v.shape is None else (tuple(v.shape), v.shape.frozen), v.doc_string,
            dict(v.metadata_props), v.is_graph_input(), v.is_graph_output(), v.is_initializer(),
            None if const is None else (type(const).__name__, const.name, const.dtype, tuple(const.shape)),
            [(u.node.name, u.idx) for u in v.uses()])


def _structure(model: ir.Model) -> list:
    """Everything of an IR model the importer reads, value by value and node by node."""
    g = model.graph
    out: list = [(model.ir_version, model.producer_name, model.producer_version, model.domain, model.model_version,
                  model.doc_string, dict(model.metadata_props), dict(g.opset_imports), g.name, g.doc_string,
                  dict(g.metadata_props), len(model.functions))]
    out += [("input", _value(v)) for v in g.inputs]
    out += [("output", _value(v)) for v in g.outputs]
    out += [("initializer", name, _value(v)) for name, v in g.initializers.items()]
    for node in g:
        out.append((node.name, node.domain, node.op_type, node.overload, node.doc_string, dict(node.metadata_props),
                    [_value(v) for v in node.inputs], [_value(v) for v in node.outputs],
                    [(a.name, a.type, repr(a.value)) for a in node.attributes.values()]))
    return out


def _both(proto: onnx.ModelProto) -> tuple[ir.Model | None, ir.Model]:
    short = deserialize.simple_model(_copy(proto))
    return short, ir.serde.deserialize_model(_copy(proto))


def _copy(proto: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    return out


def _assert_same(short: ir.Model, reference: ir.Model) -> None:
    assert _structure(short) == _structure(reference)
    assert ir.serde.serialize_model(short) == ir.serde.serialize_model(reference)


def _chain() -> onnx.ModelProto:
    """Initializers of equal and different shapes, a declared intermediate, an initializer with a
    value_info, an input with a default value, an omitted optional input and output, metadata."""
    inits = [numpy_helper.from_array(np.full((4,), i, np.float32), f"c{i}") for i in range(3)]
    inits += [numpy_helper.from_array(np.ones((2, 2), np.float32), "m"),
              numpy_helper.from_array(np.zeros((4,), np.float32), "x_default"),
              numpy_helper.from_array(np.array(0.5, np.float32), "ratio")]
    nodes = [helper.make_node("Add", ["x", "c0"], ["a"], name="a", doc_string="first"),
             helper.make_node("Add", ["a", "c1"], ["b"], name="b"),
             helper.make_node("Dropout", ["b", "ratio", ""], ["d", ""], name="drop"),
             helper.make_node("Add", ["d", "x_default"], ["y"], name="y"),
             helper.make_node("MatMul", ["m", "m"], ["mm"], name="mm")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                     helper.make_tensor_value_info("x_default", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("mm", TensorProto.FLOAT, [2, 2])], inits,
        value_info=[helper.make_tensor_value_info("a", TensorProto.FLOAT, [4]),
                    helper.make_tensor_value_info("c2", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="test")
    helper.set_model_props(model, {"k": "v"})
    model.graph.node[0].metadata_props.add(key="n", value="1")
    return model


@pytest.mark.parametrize("name", ["chain", *sorted(light_models())])
def test_the_short_path_builds_what_onnx_ir_builds(name):
    proto = _chain() if name == "chain" else onnx.load(str(light_models()[name]))
    short, reference = _both(proto)
    assert short is not None, "this model should take the short path"
    _assert_same(short, reference)


@pytest.mark.parametrize("seed", [s.__name__ for s in fuzz_seeds.SEEDS])
def test_seeds_and_their_mutants_agree_or_take_onnx_irs_path(seed):
    """Each fuzz seed, and the checked mutants of it among the first fuzz cases: the short path's
    model equals onnx-ir's, or the short path declines (subgraphs, functions ...)."""
    protos = [getattr(fuzz_seeds, seed)().proto]
    for index in range(300):
        case, _ = fuzz.make_case(index, 0)
        if case.raw is None and case.proto.graph.name == protos[0].graph.name and \
                len(case.proto.functions) == len(protos[0].functions):
            protos.append(case.proto)
    compared = 0
    for proto in protos:
        proto = _copy(proto)
        try:
            validate.check_model(proto)
        except OnnxportError:
            continue
        try:
            reference = ir.serde.deserialize_model(_copy(proto))
        except Exception:  # noqa: BLE001 - onnx-ir refuses it: the short path must not accept it
            assert deserialize.simple_model(_copy(proto)) is None
            continue
        short = deserialize.simple_model(_copy(proto))
        if short is not None:
            _assert_same(short, reference)
            compared += 1
    if seed not in ("control_flow", "local_function"):
        assert compared, "no model of this seed took the short path"


def test_the_short_path_declines_what_it_does_not_cover():
    proto = _chain()
    body = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "body", [],
                             [helper.make_tensor_value_info("o", TensorProto.FLOAT, [4])])
    with_subgraph = _copy(proto)
    with_subgraph.graph.node.append(helper.make_node("If", ["cond"], ["z"], then_branch=body, else_branch=body))
    unresolved = _copy(proto)
    unresolved.graph.node.append(helper.make_node("Relu", ["nowhere"], ["r"]))
    twice = _copy(proto)
    twice.graph.node.append(helper.make_node("Relu", ["x"], ["a"]))
    dangling_output = _copy(proto)
    dangling_output.graph.output.append(helper.make_tensor_value_info("ghost", TensorProto.FLOAT, [1]))
    annotated = _copy(proto)
    annotated.graph.quantization_annotation.add(tensor_name="a")
    unsorted = _copy(proto)
    unsorted.graph.node.insert(0, unsorted.graph.node.pop(1))  # b, read before a is computed
    function = _copy(proto)
    function.functions.append(helper.make_function("local", "f", ["i"], ["o"], [helper.make_node("Relu", ["i"], ["o"])],
                                                   [helper.make_opsetid("", 21)]))
    for model in (with_subgraph, unresolved, twice, dangling_output, annotated, unsorted, function):
        assert deserialize.simple_model(_copy(model)) is None
    # and the public entry point gives onnx-ir's model for them
    for model in (unresolved, unsorted):
        _assert_same(deserialize.deserialize_model(_copy(model)), ir.serde.deserialize_model(_copy(model)))
