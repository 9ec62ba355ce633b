"""The optimizer's flattened MatMul: ``Reshape(MatMul(Reshape(x, [P, K]), W), S)`` -> ``MatMul(x, W)``
when ``S`` restores ``x``'s leading dims (TensorFlow's Tensordot, as Keras Dense writes it)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from onnxport.exporting.passes.optimize import optimize

from ..conftest import make_model, tensor_info

_W = np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32)


def _tensordot(x_shape, out_shape, flat_shape=(None, None)) -> onnx.ModelProto:
    """x [..., 6] -> Reshape to [P, 6] -> MatMul W [6, 5] -> Reshape to x's leading dims + [5],
    both shapes computed at run time from Shape(x) as TensorFlow's Tensordot does; the values
    carry the shapes given."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Constant", [], ["lead_end"], value=numpy_helper.from_array(np.asarray([-1], np.int64))),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.asarray([0], np.int64))),
        helper.make_node("Slice", ["sx", "zero", "lead_end"], ["lead"]),
        helper.make_node("ReduceProd", ["lead"], ["p"], keepdims=1),
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.asarray([6], np.int64))),
        helper.make_node("Constant", [], ["n"], value=numpy_helper.from_array(np.asarray([5], np.int64))),
        helper.make_node("Concat", ["p", "k"], ["flat_shape"], axis=0),
        helper.make_node("Concat", ["lead", "n"], ["out_shape"], axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["mm"]),
        helper.make_node("Reshape", ["mm", "out_shape"], ["y"]),
    ]
    proto = make_model(nodes, [tensor_info("x", list(x_shape))], [tensor_info("y", list(out_shape))],
                       [numpy_helper.from_array(_W, "w")], opset=18)
    proto.graph.value_info.extend([tensor_info("flat", list(flat_shape)), tensor_info("mm", [None, 5])])
    return proto


def _check(proto: onnx.ModelProto, x: np.ndarray) -> list[str]:
    """The ops of the optimized model, whose result is the original's."""
    model = ir.serde.deserialize_model(proto)
    optimize(model)
    out = ir.serde.serialize_model(model)
    onnx.checker.check_model(out, full_check=True)
    got, want = (ort.InferenceSession(p.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
                 for p in (out, proto))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[0], x @ _W, rtol=1e-5, atol=1e-5)
    return [n.op_type for n in model.graph]


def _x(shape) -> np.ndarray:
    """An input for ``shape`` (unknown dims: 3 and 4)."""
    dims = [d if isinstance(d, int) else (3, 4)[i] for i, d in enumerate(shape)]
    return np.random.default_rng(0).standard_normal(dims).astype(np.float32)


@pytest.mark.parametrize("x_shape, out_shape", [
    ((None, 4, 6), (None, 4, 5)),                  # one unknown dim: the element count fixes it
    (("b", "s", 6), ("b", "s", 5)),                # the same named dims
    ((3, 4, 2, 6), (3, 4, 2, 5)),                  # static, rank 4
])
def test_flattened_matmul_is_one_matmul(x_shape, out_shape):
    assert _check(_tensordot(x_shape, out_shape), _x(x_shape)) == ["MatMul"]


@pytest.mark.parametrize("x_shape, out_shape", [
    ((None, None, 6), (None, None, 5)),            # two unknown dims: not proved equal
    (("b", "s", 6), ("c", "t", 5)),                # other names: the same
    (("b", 4, 6), ("b", None, 5)),                 # a known dim against an unknown one
])
def test_flattened_matmul_stays_when_unproved(x_shape, out_shape):
    ops = _check(_tensordot(x_shape, out_shape), _x(x_shape))
    assert ops.count("Reshape") == 2 and ops.count("MatMul") == 1
