"""One input spec and one call-time check for every backend (onnxport.importing.inputs): the same model
called with inputs whose symbolic dims disagree fails the same way in torch and in JAX."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest

import onnxport
from onnxport.errors import InputError
from onnxport.importing.inputs import CallCheck, input_spec


def _add_model() -> onnx.ModelProto:
    a = onnx.helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, ["n", 3])
    b = onnx.helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, ["n", 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 3])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Add", ["a", "b"], ["y"])], "g", [a, b], [y])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


def test_input_spec_and_call_check():
    model = onnxport.load(_add_model())
    specs = [input_spec(v) for v in model.graph.inputs]
    assert specs[0].name == "a" and specs[0].is_tensor and specs[0].dtype == ir.DataType.FLOAT
    assert specs[0].shape == ("n", 3)
    call = CallCheck()
    call.shape(specs[0], (2, 3))
    with pytest.raises(InputError, match=r"input 'b' dimension 0 \('n'\) is 4, but another input has 'n' = 2"):
        call.shape(specs[1], (4, 3))
    with pytest.raises(InputError, match="dimension 1 must be 3"):
        CallCheck().shape(specs[0], (2, 5))


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_every_backend_checks_symbolic_dims(backend):
    if backend not in onnxport.backends():
        pytest.skip(f"{backend} is not installed")
    imported = onnxport.import_model(_add_model(), backend=backend)
    be = onnxport.get_backend(backend)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(be.run(imported, [x, x])[0]), x + x)
    with pytest.raises(InputError, match=r"'n'\) is 4, but another input has 'n' = 2"):
        be.run(imported, [x, np.ones((4, 3), np.float32)])
