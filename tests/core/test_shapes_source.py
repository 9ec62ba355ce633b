"""Shape inference on the loaded proto (``shapes._from_source``) gives what inference on the
re-serialized IR model gives, and is not used where the two could differ."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_ir.passes.common import RemoveInitializersFromInputsPass

import onnxport
from onnxport.errors import ModelError
from onnxport.importing import plan as driver
from onnxport.importing.context import value_shape
from onnxport.ir import io as _io
from onnxport.ir import shapes
from onnxport_testkit import fuzz_seeds
from onnxport_testkit.light import light_models


def _model(nodes, inputs, outputs, inits=(), value_info=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _chain_with_inits() -> onnx.ModelProto:
    """Add/Relu/Concat over small, large, scalar and input-declared initializers, a declared
    intermediate and an undeclared one."""
    inits = [numpy_helper.from_array(np.arange(4, dtype=np.float32), "small"),
             numpy_helper.from_array(np.ones((300, 4), np.float32), "large"),
             numpy_helper.from_array(np.array(2.0, np.float32), "scalar"),
             numpy_helper.from_array(np.zeros(4, np.float32), "declared")]
    nodes = [helper.make_node("Add", ["x", "small"], ["a"], name="a"),
             helper.make_node("Mul", ["a", "scalar"], ["m"], name="m"),
             helper.make_node("Add", ["m", "declared"], ["d"], name="d"),
             helper.make_node("Add", ["large", "d"], ["b"], name="b"),
             helper.make_node("Relu", ["b"], ["y"], name="r")]
    return _model(nodes, [_vi("x", [4]), _vi("declared", [4])], [_vi("y", [300, 4])], inits,
                  value_info=[_vi("a", [4])])


def _typed(proto: onnx.ModelProto, from_source: bool) -> dict[str, tuple]:
    """Every value's dtype and shape after the import's inference (from the proto, or from the IR)."""
    model = _io.load(proto, keep_source=True)
    source = model.meta.pop(_io.SOURCE_KEY)
    driver.validate(model)
    RemoveInitializersFromInputsPass()(model)
    assert not driver.share_initializers(model)
    if from_source:
        assert shapes._from_source(model, source) is not None, "the model should take the proto path"
    shapes.infer_shapes(model, source=source if from_source else None)
    values = {}
    for g in driver.iter_model_graphs(model):
        for v in (*g.inputs, *g.initializers.values(), *(o for n in g for o in n.outputs)):
            values[v.name] = (v.dtype, value_shape(v))
    return values


_SEEDS = {"chain_with_inits": _chain_with_inits, "mlp": lambda: fuzz_seeds.mlp().proto,
          "cnn": lambda: fuzz_seeds.cnn().proto, "constant_reshape": lambda: fuzz_seeds.constant_reshape().proto}
_LIGHT = ["resnet50", "squeezenet", "inception_v1", "shufflenet"]


@pytest.mark.parametrize("name", sorted(_SEEDS) + _LIGHT)
def test_inference_from_the_loaded_proto_equals_inference_from_the_ir(name):
    proto = _SEEDS[name]() if name in _SEEDS else onnx.load(str(light_models()[name]))
    via_ir, via_source = _typed(proto, False), _typed(proto, True)
    assert via_source == via_ir
    assert any(s is not None for _, s in via_ir.values())  # inference did fill in shapes


def test_value_info_the_ir_would_not_keep_falls_back_to_the_ir():
    """value_info on a graph input, on a graph output, twice, or naming nothing: onnx-ir drops or
    merges those, so inference reads the re-serialized model as before."""
    base = _chain_with_inits()
    for extra in ([_vi("x", [5])], [_vi("y", [300, 4])], [_vi("m", [4]), _vi("m", [4])], [_vi("nowhere", [1])]):
        proto = onnx.ModelProto()
        proto.CopyFrom(base)
        proto.graph.value_info.extend(extra)
        model = _io.load(proto, keep_source=True)
        source = model.meta.pop(_io.SOURCE_KEY)
        driver.validate(model)
        RemoveInitializersFromInputsPass()(model)
        assert shapes._from_source(model, source) is None, extra


def test_contradicting_value_info_is_refused_on_the_proto_path():
    proto = _chain_with_inits()
    proto.graph.value_info.append(_vi("m", [4], TensorProto.INT64))
    with pytest.raises(ModelError, match="contradicts.*strict=False"):
        onnxport.prepare(proto)
    with pytest.warns(UserWarning, match="contradicts"):
        onnxport.prepare(proto, strict=False)


def test_a_graph_changed_after_loading_is_inferred_from_the_ir():
    """Identity(initializer) readers are rewired (share_initializers) and a node out of order is
    sorted: the proto no longer is the graph, and the plan's types are still right."""
    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    nodes = [helper.make_node("Relu", ["s"], ["y"], name="r"),  # out of order
             helper.make_node("Identity", ["w"], ["wi"], name="i"),
             helper.make_node("Add", ["x", "wi"], ["s"], name="a")]
    proto = _model(nodes, [_vi("x", [4])], [_vi("y", [4])], [w])
    plan = onnxport.prepare(proto)
    types = {o.name: (o.dtype, value_shape(o)) for n in plan.model.graph for o in n.outputs}
    assert types == {"s": (ir.DataType.FLOAT, (4,)), "y": (ir.DataType.FLOAT, (4,))}


def test_the_proto_path_passes_large_weights_as_typed_inputs_without_data():
    model = _io.load(_chain_with_inits(), keep_source=True)
    source = model.meta.pop(_io.SOURCE_KEY)
    RemoveInitializersFromInputsPass()(model)
    proto = shapes._from_source(model, source)
    assert sorted(t.name for t in proto.graph.initializer) == ["declared", "scalar", "small"]
    inputs = {i.name: i.type.tensor_type for i in proto.graph.input}
    assert sorted(inputs) == ["declared", "large", "scalar", "small", "x"]
    assert [d.dim_value for d in inputs["large"].shape.dim] == [300, 4]
    assert inputs["scalar"].HasField("shape") and not inputs["scalar"].shape.dim
