"""The core's Resize maths (onnxport.opmath.resize) against the ONNX reference implementation."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from onnxport.opmath.resize import resize_plan, resize_sizes


def _numpy_resize(x, roi, scales, sizes, *, axes=None, policy="stretch", mode, coord, nearest_mode="round_prefer_floor",
                  antialias=0, cubic_a=-0.75, exclude_outside=0, extrapolation_value=0.0):
    fixed = resize_sizes(x.shape, roi, scales, sizes, axes, policy)
    plan = resize_plan(x.shape, fixed, mode=mode, coord=coord, nearest_mode=nearest_mode, antialias=antialias,
                       cubic_a=cubic_a, exclude_outside=exclude_outside)
    work = x.astype(np.float64)
    for ax in plan:
        a = ax.axis
        if mode == "nearest":
            work = np.take(work, ax.pick, axis=a)
        else:
            g = np.take(work, ax.idx, axis=a)
            w = ax.coeffs.reshape((1,) * a + ax.coeffs.shape + (1,) * (x.ndim - a - 1))
            work = (g * w).sum(axis=a + 1)
    for ax in plan:
        if ax.extrap is not None:
            shape = [1] * x.ndim
            shape[ax.axis] = ax.extrap.size
            work = np.where(ax.extrap.reshape(shape), extrapolation_value, work)
    return work


def _reference(x, roi, scales, sizes, **attrs):
    names = ["x", "roi" if roi is not None else "", "scales" if scales is not None else "",
             "sizes" if sizes is not None else ""]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **attrs)
    inputs = [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)]
    feeds = {"x": x}
    for name, val, t in (("roi", roi, onnx.TensorProto.FLOAT), ("scales", scales, onnx.TensorProto.FLOAT),
                         ("sizes", sizes, onnx.TensorProto.INT64)):
        if val is not None:
            inputs.append(helper.make_tensor_value_info(name, t, val.shape))
            feeds[name] = val
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, feeds)[0]


CASES = [
    dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor", scales=[1, 1, 2.0, 3.0]),
    dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil",
         scales=[1, 1, 0.6, 1.7]),
    dict(mode="linear", coordinate_transformation_mode="half_pixel", scales=[1, 1, 1.5, 0.5]),
    dict(mode="linear", coordinate_transformation_mode="align_corners", sizes=[1, 2, 7, 3]),
    dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel", antialias=1, scales=[1, 1, 0.4, 0.6]),
    dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric", sizes=[1, 2, 9, 4]),
    dict(mode="cubic", coordinate_transformation_mode="half_pixel", scales=[1, 1, 1.8, 0.7]),
    dict(mode="cubic", coordinate_transformation_mode="asymmetric", exclude_outside=1, cubic_coeff_a=-0.5,
         scales=[1, 1, 2.0, 2.0]),
    dict(mode="cubic", coordinate_transformation_mode="half_pixel", antialias=1, scales=[1, 1, 0.5, 0.35]),
    dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", roi=[0, 0, 0.1, 0.2, 1, 1, 0.8, 1.3],
         extrapolation_value=7.0, sizes=[1, 2, 4, 5]),
    dict(mode="nearest", coordinate_transformation_mode="half_pixel", keep_aspect_ratio_policy="not_larger",
         axes=[2, 3], sizes=[7, 9]),
    dict(mode="linear", coordinate_transformation_mode="half_pixel", keep_aspect_ratio_policy="not_smaller",
         axes=[3, 2], sizes=[3, 4]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['mode']}-{c['coordinate_transformation_mode']}")
def test_resize_maths_matches_reference(case):
    case = dict(case)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    roi = np.array(case.pop("roi"), np.float32) if "roi" in case else None
    scales = np.array(case.pop("scales"), np.float32) if "scales" in case else None
    sizes = np.array(case.pop("sizes"), np.int64) if "sizes" in case else None
    want = _reference(x, roi, scales, sizes, **case)
    got = _numpy_resize(
        x, roi, scales, sizes, axes=case.get("axes"), policy=case.get("keep_aspect_ratio_policy", "stretch"),
        mode=case["mode"], coord=case["coordinate_transformation_mode"],
        nearest_mode=case.get("nearest_mode", "round_prefer_floor"), antialias=case.get("antialias", 0),
        cubic_a=case.get("cubic_coeff_a", -0.75), exclude_outside=case.get("exclude_outside", 0),
        extrapolation_value=case.get("extrapolation_value", 0.0))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_sizes_errors():
    with pytest.raises(ValueError, match="scales or sizes"):
        resize_sizes((1, 3), None, None, None, None, "stretch")
    fixed = resize_sizes((1, 3), None, np.array([1.0, 2.0]), None, None, "stretch")
    assert fixed.out == [1, 6] and fixed.factors == [1.0, 2.0]
    with pytest.raises(ValueError, match="unknown Resize mode"):
        resize_plan((1, 3), fixed, mode="area", coord="half_pixel", nearest_mode="floor", antialias=0,
                    cubic_a=-0.75, exclude_outside=0)
    with pytest.raises(ValueError, match="needs roi"):
        resize_plan((1, 3), fixed, mode="linear", coord="tf_crop_and_resize", nearest_mode="floor", antialias=0,
                    cubic_a=-0.75, exclude_outside=0)
