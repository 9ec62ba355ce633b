"""Channels-last execution (onnxport_jax.layout): same numbers as the NCHW path and onnxruntime,
gradients and vmap intact, params and consts keep their ONNX shapes, HWIO weights cached per array."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport.importing.layout import passed_on
from onnxport_jax.ops.import_ import conv, normalization, pool, shape_ops

RNG = np.random.default_rng(0)


def _w(name: str, *shape: int, scale: float = 0.3) -> onnx.TensorProto:
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _cnn() -> onnx.ModelProto:
    """Conv/BN/ReLU, ceil-mode MaxPool, depthwise and grouped convs, a broadcast Add of a
    [C,1,1] constant, Concat on channels, padded AveragePool, LRN, an If whose branches read an
    NHWC candidate of the outer graph, GlobalAveragePool, Flatten, Gemm; a Conv output is a graph
    output too."""
    c = 8
    inits = [
        _w("w1", c, 3, 3, 3), _w("b1", c),
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, c).astype(np.float32), "bn_s"),
        _w("bn_b", c), _w("bn_m", c),
        numpy_helper.from_array(RNG.uniform(0.5, 2, c).astype(np.float32), "bn_v"),
        _w("wd", c, 1, 3, 3), _w("wg", c, c // 2, 1, 1), _w("bias", c, 1, 1),
        _w("w2", c, 2 * c, 3, 3), _w("fc", 4, c), _w("fcb", 4),
        numpy_helper.from_array(np.array(True), "cond"),
    ]
    then_g = helper.make_graph([helper.make_node("Relu", ["side"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2, 8, 9, 9])])
    else_g = helper.make_graph([helper.make_node("Neg", ["side"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2, 8, 9, 9])])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["n1"], epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
        helper.make_node("Conv", ["p1", "wd"], ["d1"], pads=[1, 1, 1, 1], group=c),
        helper.make_node("Conv", ["d1", "wg"], ["g1"], group=2),
        helper.make_node("Add", ["g1", "bias"], ["a1"]),
        helper.make_node("Concat", ["a1", "p1"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["c2"], ["p2"], kernel_shape=[2, 2], pads=[0, 0, 1, 1], count_include_pad=0),
        helper.make_node("LRN", ["p2"], ["l2"], size=3),
        helper.make_node("Relu", ["c2"], ["side"]),
        helper.make_node("If", ["cond"], ["i1"], then_branch=then_g, else_branch=else_g),
        helper.make_node("AveragePool", ["i1"], ["i2"], kernel_shape=[2, 2], pads=[0, 0, 1, 1], count_include_pad=0),
        helper.make_node("Sigmoid", ["i2"], ["s1"]),
        helper.make_node("Mul", ["s1", "l2"], ["m1"]),
        helper.make_node("GlobalAveragePool", ["m1"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc", "fcb"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 33, 33])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("c2", TensorProto.FLOAT, [2, 8, 9, 9])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.fixture(scope="module")
def cnn():
    proto = _cnn()
    x = RNG.standard_normal((2, 3, 33, 33)).astype(np.float32)
    ref = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    return proto, x, ref


def _forms(model) -> dict[str, int]:
    steps = model._program.steps
    return {"converted": sum(s.convert is not None for s in steps), "hwio": len(model._program.hwio)}


def test_channels_last_matches_onnxruntime_and_the_nchw_path(cnn) -> None:
    proto, x, ref = cnn
    fast = onnxport.import_model(proto, backend="jax")
    plain = onnxport.import_model(proto, backend="jax", channels_last=False)
    assert _forms(fast)["converted"] > 5 and _forms(fast)["hwio"] == 2  # w1 and w2 (ungrouped)
    assert _forms(plain) == {"converted": 0, "hwio": 0}
    for model in (fast, plain):
        for out in (model.jit()(model.params, x), model(x), jax.jit(model.apply)(model.params, x)):
            for got, want in zip(out, ref):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
    # what users see keeps the ONNX layout
    assert fast.params["w1"].shape == (8, 3, 3, 3) and fast.params["w2"].shape == (8, 16, 3, 3)


def test_gradients_and_vmap_are_unchanged(cnn) -> None:
    proto, x, _ = cnn
    fast = onnxport.import_model(proto, backend="jax")
    plain = onnxport.import_model(proto, backend="jax", channels_last=False)

    def loss(model, f):
        return lambda p, x: jnp.sum(f(p, x)[0] ** 2)

    for f_fast, f_plain in ((fast.jit(), plain.jit()), (fast.apply, plain.apply)):
        g1, gx1 = jax.grad(loss(fast, f_fast), argnums=(0, 1))(fast.params, x)
        g2, gx2 = jax.grad(loss(plain, f_plain), argnums=(0, 1))(plain.params, x)
        assert set(g1) == set(g2)
        for k in g1:
            assert g1[k].shape == fast.params[k].shape
            np.testing.assert_allclose(np.asarray(g1[k]), np.asarray(g2[k]), rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(np.asarray(gx1), np.asarray(gx2), rtol=1e-3, atol=1e-4)
    xs = np.stack([x, x[::-1]])
    got = jax.vmap(lambda xx: fast.apply(fast.params, xx)[0])(xs)
    want = jax.vmap(lambda xx: plain.apply(plain.params, xx)[0])(xs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
    # independent of both paths: onnxruntime per batch entry
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for i in range(len(xs)):
        np.testing.assert_allclose(np.asarray(got[i]), sess.run(None, {"x": xs[i]})[0], rtol=1e-4, atol=1e-5)


def test_channels_last_gradients_match_onnxruntime_differences(cnn) -> None:
    """Directional derivatives of sum(y**2) from onnxruntime central differences (float64 sums)
    against the fast path's gradients: w.r.t. the input and w.r.t. the weight w2."""
    proto, x, _ = cnn
    fast = onnxport.import_model(proto, backend="jax")
    gp, gx = jax.grad(lambda p, xx: jnp.sum(fast.apply(p, xx)[0] ** 2), argnums=(0, 1))(fast.params, x)

    def loss(model_proto: onnx.ModelProto, xx: np.ndarray) -> float:
        sess = ort.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
        return float(np.sum(sess.run(None, {"x": xx})[0].astype(np.float64) ** 2))

    rng = np.random.default_rng(1)
    v = rng.standard_normal(x.shape).astype(np.float32)
    eps = 1e-2
    fd = (loss(proto, x + eps * v) - loss(proto, x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(float(np.sum(np.asarray(gx, np.float64) * v)), fd, rtol=2e-2)

    w2 = next(i for i in proto.graph.initializer if i.name == "w2")
    base = numpy_helper.to_array(w2)
    d = rng.standard_normal(base.shape).astype(np.float32)

    def with_w2(arr: np.ndarray) -> onnx.ModelProto:
        m = onnx.ModelProto()
        m.CopyFrom(proto)
        for init in m.graph.initializer:
            if init.name == "w2":
                init.CopyFrom(numpy_helper.from_array(arr.astype(np.float32), "w2"))
        return m

    fd_w = (loss(with_w2(base + eps * d), x) - loss(with_w2(base - eps * d), x)) / (2 * eps)
    np.testing.assert_allclose(float(np.sum(np.asarray(gp["w2"], np.float64) * d)), fd_w, rtol=2e-2)


def test_hwio_weights_are_cached_per_array_and_follow_new_params(cnn) -> None:
    proto, x, _ = cnn
    model = onnxport.import_model(proto, backend="jax")
    f = model.jit()
    first = model.laid_out(model.params)
    again = model.laid_out(model.params)
    assert first.keys() == {"param:w1", "param:w2"}
    assert all(first[k] is again[k] for k in first)  # no second relayout for the same arrays
    assert first["param:w1"].shape == (3, 3, 3, 8)
    # a changed weight is laid out again: the outputs follow the new params
    new = {**model.params, "w2": model.params["w2"] * 2.0}
    plain = onnxport.import_model(proto, backend="jax", channels_last=False)
    np.testing.assert_allclose(np.asarray(f(new, x)[1]), np.asarray(plain.apply({**plain.params, "w2": new["w2"]}, x)[1]),
                               rtol=1e-4, atol=1e-5)
    assert model.laid_out(new)["param:w2"] is not first["param:w2"]


def test_planned_forms_cover_the_image_ops() -> None:
    """A plain conv tower is NHWC from the first Conv to the last pooling step."""
    proto = _cnn()
    model = onnxport.import_model(proto, backend="jax")
    steps = model._program.steps
    special = (conv.conv_nhwc, conv.conv_nhwc_hwio, pool.max_pool_nhwc, pool.average_pool_nhwc,
               shape_ops.concat_nhwc, pool.global_average_pool_nhwc, normalization.lrn_nhwc)
    nhwc = {s.node.op_type for s in steps
            if s.fn in special or s.node.op_type in ("Add", "Mul", "BatchNormalization") and s.convert is not None}
    assert {"Conv", "MaxPool", "AveragePool", "Concat", "GlobalAveragePool", "LRN", "Add", "Mul",
            "BatchNormalization"} <= nhwc
    # the Relu whose output the If branches read from the main graph runs NCHW (its input converted)
    side = next(s for s in steps if s.node.op_type == "Relu" and s.outputs[0].name == "side")
    assert side.convert == ("first",)
    # the If's result is NCHW: the AveragePool after it is not planned NHWC
    after_if = [s for s in steps if s.node.op_type == "AveragePool"][1]
    assert after_if.fn is not pool.average_pool_nhwc


def test_channel_shuffle_runs_channels_last() -> None:
    """ShuffleNet's Reshape -> Transpose -> Reshape between two Convs stays NHWC."""
    inits = [_w("w1", 6, 3, 1, 1), _w("w2", 6, 2, 3, 3),
             numpy_helper.from_array(np.array([1, 3, 2, 5, 5], np.int64), "split"),
             numpy_helper.from_array(np.array([1, 6, 5, 5], np.int64), "back")]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"]),
        helper.make_node("Reshape", ["c1", "split"], ["r1"]),
        helper.make_node("Transpose", ["r1"], ["t1"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t1", "back"], ["r2"]),
        helper.make_node("Conv", ["r2", "w2"], ["y"], pads=[1, 1, 1, 1], group=3),
    ]
    graph = helper.make_graph(nodes, "shuffle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 5, 5])], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = RNG.standard_normal((1, 3, 5, 5)).astype(np.float32)
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    model = onnxport.import_model(proto, backend="jax")
    assert sum(s.fn is passed_on for s in model._program.steps) == 2
    assert all(s.convert is None or "first" not in s.convert for s in model._program.steps)
    np.testing.assert_allclose(np.asarray(model.jit()(model.params, x)), want, rtol=1e-4, atol=1e-5)
