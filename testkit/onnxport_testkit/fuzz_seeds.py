"""Seed models of the fuzz test: small, valid, and each exercising one part of the loader."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WEIGHTS_FILE = "weights.bin"


@dataclasses.dataclass
class Case:
    """One model to try: the proto plus the files beside it (external data, links)."""

    name: str
    proto: onnx.ModelProto
    files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    #: (link name, target) symbolic links created beside the model
    symlinks: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: (link name, existing file name) hard links created beside the model
    hardlinks: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: serialized bytes that replace the proto (byte-level mutations)
    raw: bytes | None = None


def _model(nodes, inputs, outputs, inits=(), opset=21, functions=(), name="g", domains=()):
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    model = helper.make_model(graph, opset_imports=imports, functions=list(functions))
    model.ir_version = 10 if opset >= 21 else 8 if opset >= 13 else 5
    return model


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _w(rng, name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def mlp() -> Case:
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="mm1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="add1"),
        helper.make_node("Relu", ["h1"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2", transB=1, alpha=1.0),
    ]
    inits = [_w(rng, "w1", (4, 8)), _w(rng, "b1", (8,)), _w(rng, "w2", (3, 8)), _w(rng, "b2", (3,))]
    return Case("mlp", _model(nodes, [_vi("x", [2, 4])], [_vi("y", [2, 3])], inits))


def cnn() -> Case:
    rng = np.random.default_rng(2)
    nodes = [
        helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1),
    ]
    var = numpy_helper.from_array(rng.uniform(0.5, 1.5, 4).astype(np.float32), "v")
    inits = [_w(rng, "cw", (4, 2, 3, 3)), _w(rng, "cb", (4,)), _w(rng, "s", (4,)), _w(rng, "bb", (4,)),
             _w(rng, "m", (4,)), var, _w(rng, "fw", (5, 16)), _w(rng, "fb", (5,))]
    return Case("cnn", _model(nodes, [_vi("x", [1, 2, 4, 4])], [_vi("y", [1, 5])], inits))


def control_flow() -> Case:
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then", [],
                               [_vi("t", [3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else", [],
                               [_vi("e", [3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
         helper.make_node("Add", ["acc", "x"], ["acc_out"], name="acc_add")],
        "body",
        [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL), _vi("acc", [3])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", [3])],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["b"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trip", "", "b"], ["y"], name="loop", body=body),
    ]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(3, np.int64), "trip")]
    return Case("control_flow", _model(nodes, [_vi("x", [3])], [_vi("y", [3])], inits))


def constant_reshape() -> Case:
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape_value")
    nodes = [
        helper.make_node("Constant", [], ["shape"], name="const_shape", value=shape),
        helper.make_node("Constant", [], ["scale"], name="const_scale", value_float=0.5),
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Mul", ["r", "scale"], ["m"], name="mul"),
        helper.make_node("Transpose", ["m"], ["y"], name="transpose", perm=[1, 0]),
    ]
    return Case("constant_reshape", _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])]))


def external_data() -> Case:
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    inits = []
    blob = b""
    for name, arr in (("w", w), ("b", b)):
        t = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=arr.shape)
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", WEIGHTS_FILE), ("offset", str(len(blob))), ("length", str(arr.nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        blob += arr.tobytes()
        inits.append(t)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Add", ["h", "b"], ["y"], name="add")]
    proto = _model(nodes, [_vi("x", [2, 4])], [_vi("y", [2, 6])], inits)
    return Case("external_data", proto, files={WEIGHTS_FILE: blob})


def local_function() -> Case:
    fn = helper.make_function(
        "local", "ScaledRelu", ["a"], ["o"],
        [helper.make_node("Relu", ["a"], ["r"]),
         helper.make_node("Constant", [], ["k"], value_float=2.0),
         helper.make_node("Mul", ["r", "k"], ["o"])],
        [helper.make_opsetid("", 21)],
    )
    nodes = [helper.make_node("ScaledRelu", ["x"], ["h"], name="call1", domain="local"),
             helper.make_node("ScaledRelu", ["h"], ["y"], name="call2", domain="local")]
    proto = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], functions=[fn], domains=[("local", 1)])
    return Case("local_function", proto)


def opset10() -> Case:
    rng = np.random.default_rng(7)
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"], name="slice"),
        helper.make_node("Resize", ["s", "scales"], ["u"], name="resize", mode="nearest"),
        helper.make_node("Conv", ["u", "cw"], ["c"], name="conv", kernel_shape=[1, 1]),
        helper.make_node("Pad", ["c"], ["p"], name="pad", pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="constant"),
        helper.make_node("ReduceMean", ["p"], ["y"], name="mean", axes=[2, 3], keepdims=1),
    ]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "starts"),
             numpy_helper.from_array(np.array([2], np.int64), "ends"),
             numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
             _w(rng, "cw", (3, 2, 1, 1))]
    return Case("opset10", _model(nodes, [_vi("x", [1, 3, 2, 2])], [_vi("y", [1, 3, 1, 1])], inits, opset=10))


SEEDS = (mlp, cnn, control_flow, constant_reshape, external_data, local_function, opset10)
