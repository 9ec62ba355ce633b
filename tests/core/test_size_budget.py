"""The call-time size budget (:mod:`onnxport.ir.safety`): every installed backend refuses, before it
allocates, a node whose computed output would pass ``ONNXPORT_MAX_ELEMENTS``, naming the node.
The models are tiny; the sizes come from shapes, settings and data computed at call time."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxport
from onnxport.ir.safety import folded_elements

F = T.FLOAT
#: the budget the tests set, far below what the bombs ask for (BIG**2 = 2**20 elements and more)
BUDGET = 1 << 16
BIG = 1 << 10


def _i64(a, n):
    return nh.from_array(np.array(a, np.int64), n)


def _f32(a, n):
    return nh.from_array(np.array(a, np.float32), n)


def _model(nodes, inits, *, opset=21, dim=2, out_type=F) -> onnx.ModelProto:
    inputs = [h.make_tensor_value_info("x", F, [dim])]
    g = h.make_graph([*nodes, h.make_node("ReduceSum", ["big"], ["out"], keepdims=0, name="sum")], "g",
                     inputs, [h.make_tensor_value_info("out", out_type, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _shape_times_big():  # [2*BIG/2, 2*BIG/2] computed from x's shape at call time
    return [h.make_node("Shape", ["x"], ["s"]), h.make_node("Mul", ["s", "k"], ["sk"]),
            h.make_node("Concat", ["sk", "sk"], ["dims"], axis=0)], [_i64([BIG // 2], "k")]


def _cases() -> dict[str, onnx.ModelProto]:
    sb, k = _shape_times_big()
    two = _i64([1, 2], "two")
    reshape = h.make_node("Reshape", ["x", "two"], ["x2"])
    out = {}
    for dim in (2, "n"):  # a static input shape, and a symbolic one (sizes only the run knows)
        tag = "" if dim == 2 else "_symbolic"
        out["ConstantOfShape" + tag] = _model([*sb, h.make_node("ConstantOfShape", ["dims"], ["big"], name="bomb")],
                                              k, dim=dim)
        out["Expand" + tag] = _model([*sb, h.make_node("Expand", ["one", "dims"], ["big"], name="bomb")],
                                     [*k, _f32([1.0], "one")], dim=dim)
        out["Tile" + tag] = _model([*sb, reshape, h.make_node("Tile", ["x2", "dims"], ["big"], name="bomb")],
                                   [*k, two], dim=dim)
        out["Range_from_data" + tag] = _model(
            [h.make_node("ReduceSum", ["x"], ["r"], keepdims=0), h.make_node("Mul", ["r", "kf"], ["lim"]),
             h.make_node("Range", ["zf", "lim", "onef"], ["big"], name="bomb")],
            [_f32(float(BIG * BIG), "kf"), _f32(0.0, "zf"), _f32(1.0, "onef")], dim=dim)
        out["Pad" + tag] = _model([*sb, h.make_node("Concat", ["dims", "dims"], ["pads"], axis=0), reshape,
                                   h.make_node("Pad", ["x2", "pads"], ["big"], name="bomb")], [*k, two], dim=dim)
        out["Resize_sizes" + tag] = _model(
            [*sb, reshape, h.make_node("Resize", ["x2", "", "", "dims"], ["big"], name="bomb")], [*k, two], dim=dim)
        out["CenterCropPad" + tag] = _model(
            [*sb, reshape, h.make_node("CenterCropPad", ["x2", "dims"], ["big"], name="bomb")], [*k, two], dim=dim)
    out["Resize_scales"] = _model([reshape, h.make_node("Resize", ["x2", "", "sc"], ["big"], name="bomb")],
                                  [two, _f32([float(BIG), float(BIG)], "sc")])
    out["Upsample_opset9"] = _model([reshape, h.make_node("Upsample", ["x2", "sc"], ["big"], name="bomb")],
                                    [two, _f32([float(BIG), float(BIG)], "sc")], opset=9)
    out["OneHot"] = _model([h.make_node("Cast", ["x"], ["xi"], to=T.INT64),
                            h.make_node("OneHot", ["xi", "depth", "vals"], ["big"], name="bomb")],
                           [_i64(BIG * BIG, "depth"), _f32([0, 1], "vals")])
    out["HannWindow"] = _model([h.make_node("HannWindow", ["n"], ["big"], name="bomb")], [_i64(BIG * BIG, "n")])
    # the length folded at import from the input's shape (a traced input in a jitted call)
    out["HannWindow_computed"] = _model(
        [h.make_node("Shape", ["x"], ["s"]), h.make_node("ReduceProd", ["s"], ["p"], keepdims=0),
         h.make_node("Mul", ["p", "kk"], ["n"]), h.make_node("HannWindow", ["n"], ["big"], name="bomb")],
        [_i64(BIG * BIG, "kk")])
    out["RandomNormal"] = _model([h.make_node("RandomNormal", [], ["big"], shape=[BIG, BIG], name="bomb")], [])
    out["broadcast_Mul"] = _model([*sb, h.make_node("ConstantOfShape", ["sk"], ["a"]),
                                   h.make_node("Unsqueeze", ["a", "ax"], ["b"]),
                                   h.make_node("Mul", ["a", "b"], ["big"], name="bomb")], [*k, _i64([1], "ax")])
    return out


CASES = _cases()


@pytest.mark.parametrize("backend", onnxport.backends())
@pytest.mark.parametrize("case", sorted(CASES))
def test_computed_allocations_are_sized_before_they_are_made(backend: str, case: str, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_MAX_ELEMENTS", str(BUDGET))
    be = onnxport.get_backend(backend)
    with pytest.raises(onnxport.OnnxportError, match=r"'bomb'.*(elements|ONNXPORT_MAX_ELEMENTS)"):
        model = onnxport.import_model(CASES[case], backend=backend)
        be.run(model, [np.array([1.0, 2.0], np.float32)])


@pytest.mark.parametrize("backend", onnxport.backends())
def test_the_same_models_run_under_a_larger_budget(backend: str, monkeypatch) -> None:
    """The refusals come from the budget, not from the models: with room, they run."""
    monkeypatch.setenv("ONNXPORT_MAX_ELEMENTS", str(BIG * BIG * 4))
    be = onnxport.get_backend(backend)
    for case in ("ConstantOfShape", "Expand", "broadcast_Mul", "OneHot"):
        model = onnxport.import_model(CASES[case], backend=backend)
        out = np.asarray(be.run(model, [np.array([1.0, 2.0], np.float32)])[0])
        assert np.isfinite(out).all()


def test_growing_sizes_are_computed_without_allocating() -> None:
    values = {1: np.array([3], np.int64)}
    assert folded_elements("OneHot", [(4, 5), (), (2,)], values.get) == 60
    assert folded_elements("Mul", [(5,), (5, 1)], lambda i: None) == 25
    assert folded_elements("Mul", [(5, 2), (5, 2)], lambda i: None) is None  # no broadcast: no growth
    assert folded_elements("HannWindow", [()], lambda i: np.array(7, np.int64)) == 7
    assert folded_elements("CenterCropPad", [(4, 4), (2,)], lambda i: np.array([6, 2], np.int64)) == 12
