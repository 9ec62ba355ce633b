"""Runtime fast paths of the torch importer: shape programs and MatMul+Add as one linear GEMM.

Both must be invisible except for speed: same values as the node-by-node computation, same
weights and gradients, errors that name the failing ONNX node.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport.errors import OnnxportError
from onnxport_torch.importer import NodeFn, ShapeProgram

from ..conftest import make_model, tensor_info


def _targets(model, kind):
    return [n.target for n in model.graph.nodes if n.op == "call_function" and isinstance(n.target, kind)]


def _linear_model(extra_use: bool = False) -> bytes:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "fc.bias")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Add", ["fc.bias", "h"], ["y"], name="add")]  # bias first: either order
    outputs = [tensor_info("y", ["n", 3, 5])]
    if extra_use:
        nodes.append(helper.make_node("Relu", ["h"], ["r"], name="relu"))
        outputs.append(tensor_info("r", ["n", 3, 5]))
    return make_model(nodes, [tensor_info("x", ["n", 3, 8])], outputs, inits).SerializeToString()


@pytest.mark.parametrize("extra_use", [False, True])
def test_matmul_add_runs_as_one_linear_with_the_same_weights_and_gradients(extra_use):
    data = _linear_model(extra_use)
    model = onnxport.import_model(data)
    fns = _targets(model, NodeFn)
    fused = [f for f in fns if f.ctx.op_type == "MatMul" and f.fn.__name__ == "_linear"]
    assert len(fused) == (0 if extra_use else 1)  # MatMul output read twice: no fusion
    assert sorted(model.initializer_keys) == ["fc.bias", "w"]
    w = model.get_parameter(model.initializer_keys["w"])
    b = model.get_parameter(model.initializer_keys["fc.bias"])
    x = torch.randn(2, 3, 8)
    out = model(x)
    y = out[0] if extra_use else out
    torch.testing.assert_close(y, x @ w.detach() + b.detach())
    y.sum().backward()
    torch.testing.assert_close(w.grad, x.reshape(-1, 8).t() @ torch.ones(6, 5))
    torch.testing.assert_close(b.grad, torch.full((5,), 6.0))


def _onnxruntime(data: bytes, x: np.ndarray) -> list[np.ndarray]:
    import onnxruntime as ort

    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})


@pytest.mark.parametrize("extra_use", [False, True])
def test_fused_linear_matches_onnxruntime(extra_use):
    """The fused MatMul+Add against onnxruntime on the same model (not the imported weights)."""
    data = _linear_model(extra_use)
    model = onnxport.import_model(data)
    for shape in [(2, 3, 8), (1, 3, 8), (4, 3, 8)]:
        x = np.random.default_rng(len(shape) + shape[0]).standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            out = model(torch.from_numpy(x))
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        want = _onnxruntime(data, x)
        assert len(out) == len(want) == (2 if extra_use else 1)
        for a, e in zip(out, want):
            np.testing.assert_allclose(a.numpy(), e, rtol=1e-5, atol=1e-5)


def test_fused_linear_error_names_the_matmul_node():
    model = onnxport.import_model(_linear_model())
    with pytest.raises(OnnxportError, match="mm"), torch.no_grad():
        model.forward(torch.randn(2, 3, 7))  # forward: past the input checks, into the node


def _shape_model() -> bytes:
    """y = Reshape(x, [Shape(x)[0], -1]); s = Shape(x) (a graph output); m = Range(0, Shape(x)[1])."""
    inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(0, np.int64), "start")]
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "zero"], ["n"], name="take_n", axis=0),
             helper.make_node("Concat", ["n", "minus1"], ["dims"], name="dims", axis=0),
             helper.make_node("Reshape", ["x", "dims"], ["y"], name="reshape"),
             helper.make_node("Gather", ["s", "one"], ["t"], name="take_t", axis=0),
             helper.make_node("Range", ["start", "t", "one"], ["m"], name="range")]
    return make_model(nodes, [tensor_info("x", ["n", "t", 4])],
                      [tensor_info("y", ["n", None]), tensor_info("s", [3], TensorProto.INT64),
                       tensor_info("m", [None], TensorProto.INT64)], inits).SerializeToString()


def test_shape_programs_follow_every_input_shape():
    model = onnxport.import_model(_shape_model())
    assert _targets(model, ShapeProgram)  # the shape arithmetic left the per-node path
    assert not [f for f in _targets(model, NodeFn) if f.ctx.op_type in ("Shape", "Gather", "Concat", "Range")]
    for shape in [(2, 3, 4), (5, 1, 4), (2, 3, 4), (1, 7, 4)]:
        x = torch.randn(shape)
        y, s, m = model(x)
        torch.testing.assert_close(y, x.reshape(shape[0], -1))
        assert s.tolist() == list(shape)
        assert m.tolist() == list(range(shape[1]))


def test_shape_programs_match_onnxruntime():
    data = _shape_model()
    model = onnxport.import_model(data)
    for shape in [(2, 3, 4), (5, 1, 4), (1, 7, 4)]:
        x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            got = model(torch.from_numpy(x))
        want = _onnxruntime(data, x)
        assert len(got) == len(want) == 3
        for a, e in zip(got, want):
            assert a.numpy().dtype == e.dtype and a.numpy().shape == e.shape
            np.testing.assert_array_equal(a.numpy(), e)


def test_shape_program_outputs_are_fresh_tensors_for_the_caller():
    model = onnxport.import_model(_shape_model())
    x = torch.randn(2, 3, 4)
    _, s, _ = model(x)
    s.add_(100)  # the caller owns its output
    _, s2, m2 = model(x)
    assert s2.tolist() == [2, 3, 4]
    assert m2.tolist() == [0, 1, 2]


def test_shape_program_error_names_the_failing_node():
    inits = [numpy_helper.from_array(np.array([3], np.int64), "three"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "three"], ["d"], name="take_rank3", axis=0),
             helper.make_node("Concat", ["minus1", "d"], ["dims"], name="dims", axis=0),
             helper.make_node("Reshape", ["x", "dims"], ["y"], name="reshape")]
    data = make_model(nodes, [tensor_info("x", None)], [tensor_info("y", None)], inits).SerializeToString()
    model = onnxport.import_model(data)
    with torch.no_grad():
        assert model(torch.randn(2, 3, 4, 5)).shape == (24, 5)  # rank 4: index 3 exists
    with pytest.raises(OnnxportError, match="take_rank3"), torch.no_grad():
        model(torch.randn(2, 3))  # rank 2: Gather index 3 is out of range


def test_shape_programs_under_jit_tracing():
    model = onnxport.import_model(_shape_model())
    traced = torch.jit.trace(lambda x: model(x)[0], torch.randn(2, 3, 4), check_trace=False)
    x = torch.randn(2, 3, 4)
    torch.testing.assert_close(traced(x), x.reshape(2, -1))
