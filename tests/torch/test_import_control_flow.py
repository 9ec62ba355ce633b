"""If / Loop / Scan / SequenceMap beyond the official node cases, each checked against onnxruntime:
scan axes and directions, loops without a trip count, empty loops, outer-scope captures in nested
subgraphs, constants inside bodies, sequences carried through loops, sequence graph inputs."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxport

from ..conftest import make_model, tensor_info

torch = pytest.importorskip("torch")

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
rng = np.random.default_rng(3)


def _const(name, value):
    arr = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(arr, name))


def _compare(model: onnx.ModelProto, feeds: dict) -> list:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, feeds)
    imported = onnxport.import_model(model, backend="torch")
    actual = onnxport.get_backend("torch").run(imported, list(feeds.values()))
    assert len(actual) == len(expected)
    for e, a in zip(expected, actual):
        if isinstance(e, list):
            assert len(e) == len(a)
            for ei, ai in zip(e, a):
                np.testing.assert_allclose(ai, ei, rtol=1e-5, atol=1e-6)
        else:
            assert a.dtype == e.dtype and a.shape == e.shape
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
    return actual


def _scan_model(**attrs) -> onnx.ModelProto:
    # state s (3,), scan input x sliced along an axis: s' = s + x_t ; y_t = s' * 2
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x_t"], ["s_out"]),
         _const("two", np.float32(2.0)),
         helper.make_node("Mul", ["s_out", "two"], ["y_t"])],
        "scan_body",
        [tensor_info("s", [3]), tensor_info("x_t", [3])],
        [tensor_info("s_out", [3]), tensor_info("y_t", [3])],
    )
    node = helper.make_node("Scan", ["s0", "x"], ["s_final", "ys"], body=body, num_scan_inputs=1, **attrs)
    return make_model([node], [tensor_info("s0", [3]), tensor_info("x", None)],
                      [tensor_info("s_final", None), tensor_info("ys", None)], opset=21)


@pytest.mark.parametrize("attrs, x_shape", [
    ({}, (4, 3)),
    ({"scan_input_axes": [1]}, (3, 4)),
    ({"scan_input_axes": [-1], "scan_input_directions": [1]}, (3, 5)),
    ({"scan_output_axes": [1], "scan_output_directions": [1]}, (4, 3)),
    ({"scan_output_axes": [-1]}, (2, 3)),
])
def test_scan_axes_and_directions(attrs, x_shape):
    feeds = {"s0": rng.standard_normal(3).astype(np.float32), "x": rng.standard_normal(x_shape).astype(np.float32)}
    _compare(_scan_model(**attrs), feeds)


def _loop_body_accumulate() -> onnx.GraphProto:
    # carried acc; cond_out = acc < 10 ; scan output = acc
    return helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=F),
         helper.make_node("Add", ["acc", "i_f"], ["acc_out"]),
         helper.make_node("Add", ["acc_out", "outer"], ["scan_v"]),
         _const("limit", np.float32(10.0)),
         helper.make_node("Less", ["acc_out", "limit"], ["cond_out"])],
        "loop_body",
        [tensor_info("i", [], I64), tensor_info("cond_in", [], B), tensor_info("acc", [])],
        [tensor_info("cond_out", [], B), tensor_info("acc_out", []), tensor_info("scan_v", [])],
    )


@pytest.mark.parametrize("trip, cond", [(None, True), (np.int64(3), True), (np.int64(20), True),
                                        (np.int64(0), True), (np.int64(5), False)])
def test_loop_trip_count_and_condition(trip, cond):
    names = ["M" if trip is not None else "", "cond", "acc0"]
    node = helper.make_node("Loop", names, ["acc_final", "scan"], body=_loop_body_accumulate())
    inputs = [tensor_info("cond", [], B), tensor_info("acc0", []), tensor_info("outer", [])]
    if trip is not None:
        inputs.insert(0, tensor_info("M", [], I64))
    model = make_model([node], inputs, [tensor_info("acc_final", None), tensor_info("scan", None)], opset=21)
    feeds = {"cond": np.array(cond), "acc0": np.float32(0.5), "outer": np.float32(-1.0)}
    if trip is not None:
        feeds = {"M": np.array(trip), **feeds}
    feeds = {k: np.asarray(v) for k, v in feeds.items()}
    _compare(model, feeds)


def test_nested_if_in_loop_captures_outer_values():
    # the inner If reads a graph input ("w") and a loop body value ("acc") from two scopes up/one up
    then_g = helper.make_graph([helper.make_node("Mul", ["acc", "w"], ["t"])], "then",
                               [], [tensor_info("t", [2])])
    else_g = helper.make_graph([_const("c", np.array([1.0, -1.0], np.float32)),
                                helper.make_node("Add", ["acc", "c"], ["e"])], "else",
                               [], [tensor_info("e", [2])])
    body = helper.make_graph(
        [_const("two", np.int64(2)),
         helper.make_node("Mod", ["i", "two"], ["r"]),
         _const("zero", np.int64(0)),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [tensor_info("i", [], I64), tensor_info("cond_in", [], B), tensor_info("acc", [2])],
        [tensor_info("cond_out", [], B), tensor_info("acc_out", [2])],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)
    model = make_model([node], [tensor_info("M", [], I64), tensor_info("x", [2]), tensor_info("w", [2])],
                       [tensor_info("y", [2])], opset=21)
    feeds = {"M": np.array(5, np.int64), "x": np.array([0.5, 2.0], np.float32),
             "w": np.array([1.5, -0.5], np.float32)}
    _compare(model, feeds)


def test_loop_carries_a_sequence_and_splits_a_sequence_input():
    seq_t = helper.make_tensor_sequence_value_info
    body = helper.make_graph(
        [helper.make_node("SequenceAt", ["xs", "i"], ["x_i"]),
         helper.make_node("Mul", ["x_i", "x_i"], ["sq"]),
         helper.make_node("SequenceInsert", ["seq_in", "sq"], ["seq_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [tensor_info("i", [], I64), tensor_info("cond_in", [], B), seq_t("seq_in", F, None)],
        [tensor_info("cond_out", [], B), seq_t("seq_out", F, None)],
    )
    nodes = [helper.make_node("SequenceLength", ["xs"], ["n"]),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             helper.make_node("Loop", ["n", "", "empty"], ["squares"], body=body),
             helper.make_node("ConcatFromSequence", ["squares"], ["flat"], axis=0)]
    model = make_model(nodes, [seq_t("xs", F, None)], [seq_t("squares", F, None), tensor_info("flat", None)],
                       opset=21)
    xs = [rng.standard_normal(k + 1).astype(np.float32) for k in range(3)]
    imported = onnxport.import_model(model, backend="torch")
    squares, flat = imported([torch.from_numpy(x) for x in xs])  # a sequence input is a list of tensors
    assert [tuple(s.shape) for s in squares] == [(1,), (2,), (3,)]
    _compare(model, {"xs": xs})


def test_sequence_map_with_two_outputs():
    seq_t = helper.make_tensor_sequence_value_info
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Shape", ["a"], ["shp"])],
        "map_body",
        [tensor_info("a", None), tensor_info("b", None)],
        [tensor_info("s", None), tensor_info("shp", None, I64)],
    )
    node = helper.make_node("SequenceMap", ["xs", "bias"], ["sums", "shapes"], body=body)
    model = make_model([node], [seq_t("xs", F, None), tensor_info("bias", [1])],
                       [seq_t("sums", F, None), seq_t("shapes", I64, None)], opset=21)
    xs = [rng.standard_normal((2, k + 1)).astype(np.float32) for k in range(3)]
    _compare(model, {"xs": xs, "bias": np.array([0.25], np.float32)})


def test_sequence_input_is_checked():
    seq_t = helper.make_tensor_sequence_value_info
    model = make_model([helper.make_node("SequenceLength", ["xs"], ["n"])], [seq_t("xs", F, None)],
                       [tensor_info("n", [], I64)], opset=21)
    imported = onnxport.import_model(model, backend="torch")
    assert int(imported([torch.zeros(2), torch.ones(3)])) == 2
    with pytest.raises(onnxport.InputError, match="sequence of tensors"):
        imported([torch.zeros(2), "not a tensor"])
