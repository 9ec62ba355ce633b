"""The optimizer's window-padding folds: Pad -> MaxPool / AveragePool / Conv, and pooling / Conv -> Slice."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from onnxport.exporting.passes.optimize import optimize

from ..conftest import make_model, tensor_info

_X = np.random.default_rng(0).standard_normal((2, 3, 8, 9)).astype(np.float32)
_W = numpy_helper.from_array(np.random.default_rng(1).standard_normal((4, 3, 3, 2)).astype(np.float32), "w")


def _const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))


def _pads(pads, value=None, axes=None):
    """Constant nodes for a Pad's pads (int64), value (float32) and axes inputs."""
    nodes = [_const("pads", np.asarray(pads, np.int64))]
    if value is not None:
        nodes.append(_const("value", np.asarray(value, np.float32)))
    if axes is not None:
        nodes.append(_const("axes", np.asarray(axes, np.int64)))
    return nodes


def _model(nodes, outputs=("y",), inits=()) -> onnx.ModelProto:
    model = make_model(nodes, [tensor_info("x", list(_X.shape))], [tensor_info(o, None) for o in outputs],
                       initializers=list(inits), opset=18)
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def _run(proto: onnx.ModelProto) -> list[np.ndarray]:
    onnx.checker.check_model(proto, full_check=True)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": _X})


def _optimized(proto: onnx.ModelProto) -> tuple[onnx.ModelProto, ir.Model]:
    """The optimized model; its numerics are the original's."""
    model = ir.serde.deserialize_model(proto)
    optimize(model)
    out = ir.serde.serialize_model(model)
    for got, want in zip(_run(out), _run(proto)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    return out, model


def _node(model: ir.Model, op_type: str) -> ir.Node:
    (node,) = [n for n in model.graph if n.op_type == op_type]
    return node


def _ops(model: ir.Model) -> list[str]:
    return [n.op_type for n in model.graph if n.op_type != "Constant"]


def _pads_of(node: ir.Node) -> list[int]:
    return list(node.attributes["pads"].value)


@pytest.mark.parametrize("value", [float("-inf"), float(np.finfo(np.float32).min)])
def test_pad_folds_into_max_pool(value):
    nodes = _pads([0, 0, 0, 1, 0, 0, 1, 2], value) + [
        helper.make_node("Pad", ["x", "pads", "value"], ["p"]),
        helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 0]),
    ]
    _, model = _optimized(_model(nodes))
    assert _ops(model) == ["MaxPool"]
    assert _pads_of(_node(model, "MaxPool")) == [1, 1, 1, 2]


@pytest.mark.parametrize("include_pad, own", [(0, [0, 0, 0, 0]), (1, [1, 1, 1, 0])])
def test_pad_folds_into_average_pool_counting_the_padding(include_pad, own):
    nodes = _pads([0, 0, 1, 0, 0, 0, 0, 1]) + [
        helper.make_node("Pad", ["x", "pads"], ["p"]),
        helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], pads=own, count_include_pad=include_pad),
    ]
    _, model = _optimized(_model(nodes))
    pool = _node(model, "AveragePool")
    assert _ops(model) == ["AveragePool"]
    assert _pads_of(pool) == [own[0] + 1, own[1], own[2], own[3] + 1]
    assert pool.attributes["count_include_pad"].value == 1


def test_pad_with_axes_folds_into_conv():
    nodes = _pads([1, 0, 0, 2], 0.0, axes=[-2, -1]) + [
        helper.make_node("Pad", ["x", "pads", "value", "axes"], ["p"]),
        helper.make_node("Conv", ["p", "w"], ["y"], strides=[2, 1], auto_pad="VALID"),
    ]
    _, model = _optimized(_model(nodes, inits=[_W]))
    conv = _node(model, "Conv")
    assert _ops(model) == ["Conv"]
    assert _pads_of(conv) == [1, 0, 0, 2] and "auto_pad" not in conv.attributes


@pytest.mark.parametrize("case", ["value", "channel", "two_readers", "max_pool_zero", "average_pool_excluding",
                                  "ceil_mode", "reflect", "negative", "pool_pads_over_kernel"])
def test_pad_does_not_fold(case):
    pads, value, mode = [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "constant"
    reader = helper.make_node("Conv", ["p", "w"], ["y"])
    outputs = ("y",)
    extra = []
    if case == "value":
        value = 0.5
    elif case == "channel":
        pads = [0, 1, 1, 1, 0, 0, 1, 1]
        reader = helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[2, 2])  # any channel count
    elif case == "two_readers":
        extra = [helper.make_node("Relu", ["p"], ["r"])]
        outputs = ("y", "r")
    elif case == "max_pool_zero":
        reader = helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[2, 2])
    elif case == "average_pool_excluding":
        reader = helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    elif case == "ceil_mode":
        value = float("-inf")
        reader = helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    elif case == "reflect":
        mode = "reflect"
    elif case == "negative":
        pads = [0, 0, -1, 1, 0, 0, 1, 1]
    elif case == "pool_pads_over_kernel":
        value = float("-inf")
        reader = helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[3, 2], pads=[1, 1, 0, 0])
    nodes = _pads(pads, value) + [helper.make_node("Pad", ["x", "pads", "value"], ["p"], mode=mode), reader, *extra]
    _, model = _optimized(_model(nodes, outputs, inits=[_W]))
    assert "Pad" in _ops(model)


def test_slices_fold_into_average_pool():
    """Symmetric padding with the first window of each dim cut: the begin pads shrink."""
    nodes = [_const("one", np.asarray([1], np.int64)), _const("end", np.asarray([2**63 - 1], np.int64)),
             _const("h", np.asarray([2], np.int64)), _const("w", np.asarray([-1], np.int64)),
             helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
             helper.make_node("Slice", ["a", "one", "end", "h"], ["b"]),
             helper.make_node("Slice", ["b", "one", "end", "w"], ["y"])]
    _, model = _optimized(_model(nodes))
    assert _ops(model) == ["AveragePool"]
    assert _pads_of(_node(model, "AveragePool")) == [0, 0, 1, 1]
    assert model.graph.outputs[0].name == "y"


def test_slice_folds_into_strided_max_pool_and_conv():
    nodes = [_const("s", np.asarray([0, 1], np.int64)), _const("e", np.asarray([-1, 100], np.int64)),
             _const("ax", np.asarray([2, 3], np.int64)),
             helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 2, 2, 1]),
             helper.make_node("Slice", ["m", "s", "e", "ax"], ["y"]),
             helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 1, 1, 1]),
             helper.make_node("Slice", ["c", "s", "e", "ax"], ["z"])]
    _, model = _optimized(_model(nodes, ("y", "z"), inits=[_W]))
    assert _ops(model) == ["MaxPool", "Conv"]
    # H: the last window (of stride 2) dropped; W: the first one
    assert _pads_of(_node(model, "MaxPool")) == [0, 0, 0, 1]
    assert _pads_of(_node(model, "Conv")) == [0, 0, 0, 1]


@pytest.mark.parametrize("case", ["step", "channel", "too_far", "two_readers", "ceil_mode"])
def test_slice_does_not_fold(case):
    start, end, axis, step = 1, 3, 2, 1
    pool = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    outputs = ("y",)
    extra = []
    if case == "step":
        step = 2
    elif case == "channel":
        axis = 1
    elif case == "too_far":
        start = 2  # two windows of stride 1: more than the begin pad
    elif case == "two_readers":
        extra = [helper.make_node("Relu", ["a"], ["r"])]
        outputs = ("y", "r")
    elif case == "ceil_mode":
        pool.update(strides=[2, 2], ceil_mode=1)
    nodes = [_const("s", np.asarray([start], np.int64)), _const("e", np.asarray([end], np.int64)),
             _const("ax", np.asarray([axis], np.int64)), _const("st", np.asarray([step], np.int64)),
             helper.make_node("MaxPool", ["x"], ["a"], **pool),
             helper.make_node("Slice", ["a", "s", "e", "ax", "st"], ["y"]), *extra]
    _, model = _optimized(_model(nodes, outputs))
    assert "Slice" in _ops(model)


def test_two_transposes_become_one() -> None:
    """Transpose(Transpose(x, [0, 2, 1, 3]), [0, 1, 3, 2]) is one Transpose with the composed perm;
    one that is also read elsewhere stays."""
    import onnx_ir as ir
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from onnxport.exporting.passes.optimize import optimize

    def build(extra_reader: bool):
        nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3]),
                 helper.make_node("Transpose", ["t"], ["y"], perm=[0, 1, 3, 2])]
        outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 5, 3])]
        if extra_reader:
            nodes.append(helper.make_node("Relu", ["t"], ["r"]))
            outs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 4, 3, 5]))
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])], outs)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])

    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for extra in (False, True):
        proto = build(extra)
        want = ort.InferenceSession(proto.SerializeToString()).run(None, {"x": x})
        model = ir.serde.deserialize_model(proto)
        optimize(model)
        out = ir.serde.serialize_model(model)
        assert [n.op_type for n in out.graph.node].count("Transpose") == (2 if extra else 1)
        got = ort.InferenceSession(out.SerializeToString()).run(None, {"x": x})
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


_XH = np.random.default_rng(2).standard_normal((2, 8, 9, 3)).astype(np.float32)  # channels last


def _nhwc_optimized(nodes, outputs=("y",)) -> tuple[onnx.ModelProto, ir.Model]:
    """The optimized model of ``nodes`` reading the channels-last input ``x``; same numerics."""
    proto = make_model(nodes, [tensor_info("x", list(_XH.shape))], [tensor_info(o, None) for o in outputs],
                       initializers=[_W], opset=18)
    proto = onnx.shape_inference.infer_shapes(proto, strict_mode=True)
    model = ir.serde.deserialize_model(proto)
    optimize(model)
    out = ir.serde.serialize_model(model)
    onnx.checker.check_model(out, full_check=True)
    run = [ort.InferenceSession(p.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": _XH})
           for p in (out, proto)]
    for got, want in zip(*run):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    return out, model


def test_pad_folds_into_conv_through_transpose():
    """Pad (NHWC) -> Transpose to NCHW -> Conv, as channels-last exporters write a padded Conv:
    the pads, permuted, join the Conv's and the Transpose reads the unpadded input."""
    nodes = _pads([0, 1, 2, 0, 0, 0, 3, 0], 0.0) + [
        helper.make_node("Pad", ["x", "pads", "value"], ["p"]),
        helper.make_node("Transpose", ["p"], ["t"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["t", "w"], ["y"], strides=[2, 1], pads=[1, 0, 0, 0]),
    ]
    _, model = _nhwc_optimized(nodes)
    assert _ops(model) == ["Transpose", "Conv"]
    assert _pads_of(_node(model, "Conv")) == [2, 2, 0, 3]
    assert list(_node(model, "Transpose").outputs[0].shape) == [2, 3, 8, 9]


@pytest.mark.parametrize("case", ["transpose_two_readers", "channel", "value"])
def test_pad_does_not_fold_through_transpose(case):
    pads, value, outputs, extra = [0, 1, 1, 0, 0, 1, 1, 0], 0.0, ("y",), []
    reader = helper.make_node("Conv", ["t", "w"], ["y"])
    if case == "transpose_two_readers":
        extra = [helper.make_node("Relu", ["t"], ["r"])]
        outputs = ("y", "r")
    elif case == "channel":  # NHWC channels are the NCHW axis 1 after the Transpose
        pads = [0, 0, 0, 1, 0, 0, 0, 0]
        reader = helper.make_node("MaxPool", ["t"], ["y"], kernel_shape=[2, 2])
    elif case == "value":
        value = 1.0
    nodes = _pads(pads, value) + [
        helper.make_node("Pad", ["x", "pads", "value"], ["p"]),
        helper.make_node("Transpose", ["p"], ["t"], perm=[0, 3, 1, 2]), reader, *extra]
    _, model = _nhwc_optimized(nodes, outputs)
    assert "Pad" in _ops(model)


@pytest.mark.parametrize("source", ["Relu", "Clip"])
def test_zero_pad_of_non_negative_values_folds_into_max_pool(source):
    """Zeros padded around values >= 0 change no window's maximum (every window keeps an element
    of the input): the Pad joins the MaxPool's pads, as ResNet's stem writes it."""
    src = ([helper.make_node("Relu", ["x"], ["s"])] if source == "Relu" else
           [_const("low", np.asarray(0.0, np.float32)), helper.make_node("Clip", ["x", "low"], ["s"])])
    nodes = src + _pads([0, 0, 1, 1, 0, 0, 1, 1], 0.0) + [
        helper.make_node("Pad", ["s", "pads", "value"], ["p"]),
        helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[3, 3], strides=[2, 2]),
    ]
    _, model = _optimized(_model(nodes))
    assert _ops(model) == [source, "MaxPool"]
    assert _pads_of(_node(model, "MaxPool")) == [1, 1, 1, 1]


@pytest.mark.parametrize("case", ["signed", "negative_clip", "dilated"])
def test_zero_pad_does_not_fold_into_max_pool(case):
    src = {"signed": [helper.make_node("Tanh", ["x"], ["s"])],
           "negative_clip": [_const("low", np.asarray(-1.0, np.float32)), helper.make_node("Clip", ["x", "low"], ["s"])],
           "dilated": [helper.make_node("Relu", ["x"], ["s"])]}[case]
    pool = dict(kernel_shape=[2, 2], dilations=[2, 2]) if case == "dilated" else dict(kernel_shape=[3, 3])
    nodes = src + _pads([0, 0, 1, 1, 0, 0, 1, 1], 0.0) + [
        helper.make_node("Pad", ["s", "pads", "value"], ["p"]), helper.make_node("MaxPool", ["p"], ["y"], **pool)]
    _, model = _optimized(_model(nodes))
    assert "Pad" in _ops(model)
