"""The exporters' transpose-sinking pass (onnxport.exporting.passes.transpose) on hand-built graphs, as the JAX
exporter writes them (intermediate values untyped): rewritten values keep a type, graph outputs
keep their names, and the results stay the same in onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort

from onnxport.exporting.passes.transpose import count_transposes, push_transposes

NCHW, NHWC = [0, 3, 1, 2], [0, 2, 3, 1]
RNG = np.random.default_rng(0)


def _node(op, inputs, name, **attrs):
    node = ir.Node("", op, inputs, attributes=ir.convenience.convert_attributes(attrs), name=name)
    node.outputs[0].name = name
    return node


def _input(name, shape):
    return ir.Value(name=name, type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape(shape))


def _const(name, arr):
    node = _node("Constant", [], name, value=ir.tensor(arr))
    node.outputs[0].const_value = ir.tensor(arr)
    node.outputs[0].dtype, node.outputs[0].shape = ir.tensor(arr).dtype, ir.Shape(list(arr.shape))
    return node


def _run(model: ir.Model, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _model(nodes, inputs, outputs) -> ir.Model:
    graph = ir.Graph(inputs, outputs, nodes=nodes, opset_imports={"": 21}, name="g")
    return ir.Model(graph, ir_version=10)


def _untyped(model: ir.Model) -> list[ir.Value]:
    """Values with an empty type (a type without an element type fails to serialize)."""
    return [v for n in model.graph for v in n.outputs if v.type is not None and v.dtype is None]


def test_a_pad_between_transposes_keeps_its_type_and_the_pair_cancels() -> None:
    """The JAX ``lax.scatter`` export: NHWC -> NCHW, Pad, back; the Pad's output has no type."""
    x = _input("x", [1, 4, 5, 3])
    t1 = _node("Transpose", [x], "t1", perm=NCHW)
    pads = _const("pads", np.array([0, 0, 1, 2, 0, 0, 0, 1], np.int64))
    pad = _node("Pad", [t1.outputs[0], pads.outputs[0]], "pad")
    t2 = _node("Transpose", [pad.outputs[0]], "y", perm=NHWC)
    model = _model([t1, pads, pad, t2], [x], [t2.outputs[0]])
    t2.outputs[0].dtype, t2.outputs[0].shape = ir.DataType.FLOAT, ir.Shape([1, 5, 8, 3])
    feed = {"x": RNG.standard_normal((1, 4, 5, 3)).astype(np.float32)}
    want = _run(model, feed)
    assert push_transposes(model) > 0
    assert not _untyped(model)
    assert count_transposes(model) == 0 and [v.name for v in model.graph.outputs] == ["y"]
    assert model.graph.outputs[0].shape == ir.Shape([1, 5, 8, 3])
    np.testing.assert_array_equal(_run(model, feed)[0], want[0])


def test_pushed_ops_are_typed_from_their_inputs() -> None:
    """Untyped results of a pushed Pad and Relu get the element type and shape of the new layout."""
    x = _input("x", [1, 4, 5, 3])
    t1 = _node("Transpose", [x], "t1", perm=NCHW)
    pads = _const("pads", np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int64))
    pad = _node("Pad", [t1.outputs[0], pads.outputs[0]], "pad")
    relu = _node("Relu", [pad.outputs[0]], "relu")
    flat = _node("Flatten", [relu.outputs[0]], "y")
    model = _model([t1, pads, pad, relu, flat], [x], [flat.outputs[0]])
    flat.outputs[0].dtype, flat.outputs[0].shape = ir.DataType.FLOAT, ir.Shape([1, 90])
    feed = {"x": RNG.standard_normal((1, 4, 5, 3)).astype(np.float32)}
    want = _run(model, feed)
    push_transposes(model)
    assert not _untyped(model)
    by_name = {v.name: v for n in model.graph for v in n.outputs}
    assert by_name["pad"].dtype == ir.DataType.FLOAT and by_name["pad"].shape == ir.Shape([1, 6, 5, 3])
    assert by_name["relu"].shape == ir.Shape([1, 6, 5, 3])
    assert count_transposes(model) == 1  # one, where Flatten needs the NCHW order
    np.testing.assert_array_equal(_run(model, feed)[0], want[0])


def test_a_transpose_moves_below_the_op_of_a_graph_output() -> None:
    """``Add(T(a), T(b))`` computing a graph output: one Transpose after the Add, named as the output."""
    a, b = _input("a", [2, 3, 4, 5]), _input("b", [2, 3, 4, 5])
    ta = _node("Transpose", [a], "ta", perm=NCHW)
    tb = _node("Transpose", [b], "tb", perm=NCHW)
    add = _node("Add", [ta.outputs[0], tb.outputs[0]], "y")
    model = _model([ta, tb, add], [a, b], [add.outputs[0]])
    add.outputs[0].dtype, add.outputs[0].shape = ir.DataType.FLOAT, ir.Shape([2, 5, 3, 4])
    feed = {k: RNG.standard_normal((2, 3, 4, 5)).astype(np.float32) for k in "ab"}
    want = _run(model, feed)
    push_transposes(model)
    assert count_transposes(model) == 1 and [v.name for v in model.graph.outputs] == ["y"]
    assert model.graph.outputs[0].producer().op_type == "Transpose"
    assert model.graph.outputs[0].shape == ir.Shape([2, 5, 3, 4])
    np.testing.assert_array_equal(_run(model, feed)[0], want[0])


def test_bitwise_ops_are_layout_agnostic() -> None:
    a = ir.Value(name="a", type=ir.TensorType(ir.DataType.INT32), shape=ir.Shape([1, 2, 3, 4]))
    t = _node("Transpose", [a], "t", perm=NCHW)
    mask = _const("mask", np.array(6, np.int32))
    band = _node("BitwiseAnd", [t.outputs[0], mask.outputs[0]], "band")
    back = _node("Transpose", [band.outputs[0]], "y", perm=NHWC)
    model = _model([t, mask, band, back], [a], [back.outputs[0]])
    back.outputs[0].dtype, back.outputs[0].shape = ir.DataType.INT32, ir.Shape([1, 2, 3, 4])
    feed = {"a": RNG.integers(0, 100, (1, 2, 3, 4)).astype(np.int32)}
    want = _run(model, feed)
    push_transposes(model)
    assert count_transposes(model) == 0
    np.testing.assert_array_equal(_run(model, feed)[0], want[0])
