"""The core's pooling window arithmetic (onnxport.opmath.pads) against onnxruntime's MaxPool (the ONNX
reference implementation gets SAME_LOWER output sizes wrong)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from onnxport.opmath.pads import pool_settings, window_slices


def _reference_max_pool(x, **attrs):
    node = helper.make_node("MaxPool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _numpy_max_pool(x, st):
    pads = [(0, 0), (0, 0)] + [(b, e + x_) for b, e, x_ in zip(st.begins, st.ends, st.extra)]
    xp = np.pad(x, pads, constant_values=-np.inf)
    y = None
    for _, spans in window_slices(xp.shape[2:], st.kernel, st.strides, st.dilations):
        sl = xp[(slice(None), slice(None), *(slice(b, e, s) for b, e, s in spans))]
        y = sl if y is None else np.maximum(y, sl)
    return y


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 2], strides=[3, 2], pads=[1, 1, 0, 0], ceil_mode=1),
    dict(kernel_shape=[2, 3], dilations=[2, 1], strides=[1, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[2, 4], strides=[2, 3], auto_pad="SAME_LOWER"),
    dict(kernel_shape=[3, 3], strides=[2, 1], auto_pad="VALID"),
], ids=str)
def test_pool_settings_match_reference(attrs):
    x = np.random.default_rng(2).standard_normal((1, 2, 7, 8)).astype(np.float32)
    want = _reference_max_pool(x, **attrs)
    st = pool_settings(x.shape[2:], attrs["kernel_shape"], attrs.get("strides"), attrs.get("dilations"),
                       attrs.get("auto_pad", "NOTSET"), attrs.get("pads"), attrs.get("ceil_mode", 0))
    assert list(want.shape[2:]) == st.out
    np.testing.assert_array_equal(_numpy_max_pool(x, st), want)


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1, pads=[1, 0, 0, 1], count_include_pad=1),
    dict(kernel_shape=[2, 3], strides=[2, 3], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
], ids=str)
def test_average_pool_counts_match_onnxruntime(attrs):
    from onnxport.opmath.pads import average_pool_counts, window_sums

    x = np.random.default_rng(5).standard_normal((1, 2, 7, 8)).astype(np.float32)
    node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    st = pool_settings(x.shape[2:], attrs["kernel_shape"], attrs.get("strides"), attrs.get("dilations"),
                       attrs.get("auto_pad", "NOTSET"), attrs.get("pads"), attrs.get("ceil_mode", 0))
    total = window_sums(x.astype(np.float64), st.kernel, st.strides, st.dilations, st.padding)
    got = total / average_pool_counts(x.shape[2:], st, attrs.get("count_include_pad", 0))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
