"""Old forms of tensor ops that opsets/adapters/tensor_adapters.py rewrites, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import onnxport

from ..conftest import make_model, tensor_info

torch = pytest.importorskip("torch")

X = np.arange(12, dtype=np.float32).reshape(2, 3, 2)


def _run(node, opset, inputs):
    names = list(node.input)
    model = make_model([node], [tensor_info(n, list(x.shape)) for n, x in zip(names, inputs)],
                       [tensor_info(node.output[0], None)], opset=opset)
    return onnxport.get_backend("torch").run(onnxport.import_model(model, backend="torch"), list(inputs))[0]


def test_concat_1_defaults_to_axis_1():
    y = _run(helper.make_node("Concat", ["a", "b"], ["y"]), 1, [X, X + 100])
    np.testing.assert_array_equal(y, np.concatenate([X, X + 100], axis=1))


def test_concat_1_keeps_a_given_axis():
    y = _run(helper.make_node("Concat", ["a", "b"], ["y"], axis=2), 1, [X, X])
    np.testing.assert_array_equal(y, np.concatenate([X, X], axis=2))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_1_paddings(mode):
    node = helper.make_node("Pad", ["x"], ["y"], paddings=[0, 1, 1, 0, 1, 0], mode=mode, value=-1.0)
    y = _run(node, 1, [X])
    width = [(0, 0), (1, 1), (1, 0)]
    want = np.pad(X, width, mode=mode, constant_values=-1.0) if mode == "constant" else np.pad(X, width, mode=mode)
    np.testing.assert_array_equal(y, want)


def test_scan_8_with_sequence_lens_is_refused():
    body = helper.make_graph([helper.make_node("Identity", ["s"], ["s2"]), helper.make_node("Identity", ["x"], ["y"])],
                             "b", [tensor_info("s", [1]), tensor_info("x", [1])],
                             [tensor_info("s2", [1]), tensor_info("y", [1])])
    node = helper.make_node("Scan", ["lens", "s0", "xs"], ["sf", "ys"], body=body, num_scan_inputs=1)
    model = make_model([node], [tensor_info("lens", [2], 7), tensor_info("s0", [2, 1]), tensor_info("xs", [2, 3, 1])],
                       [tensor_info("sf", None), tensor_info("ys", None)], opset=8)
    with pytest.raises(onnxport.OnnxportError, match="sequence_lens"):
        onnxport.import_model(model, backend="torch")
