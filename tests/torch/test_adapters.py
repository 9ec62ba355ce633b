"""Old-opset forms are adapted by the core: each model at its old opset matches onnxruntime."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

import onnxport
from onnxport_testkit.adapter_cases import ADAPTER_CASES, check_import

from ..conftest import make_model, tensor_info

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
X3 = rng.standard_normal((2, 3, 4)).astype(np.float32)
X4 = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)

CASES = {
    "squeeze_axes_attr_11": (11, helper.make_node("Squeeze", ["x"], ["y"], axes=[0]), [np.ones((1, 3), np.float32)]),
    "unsqueeze_axes_attr_11": (11, helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 3]), [X3]),
    "reducemean_axes_attr_13": (13, helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0), [X3]),
    "reducesum_axes_attr_11": (11, helper.make_node("ReduceSum", ["x"], ["y"], axes=[-1]), [X3]),
    "split_attr_11": (11, helper.make_node("Split", ["x"], ["y", "z"], axis=2, split=[1, 3]), [X3]),
    "pad_attrs_7": (7, helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 0, 2, 1], value=1.5), [X3]),
    "clip_attrs_7": (7, helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.5), [X3]),
    "slice_attrs_9": (9, helper.make_node("Slice", ["x"], ["y"], starts=[0, 1], ends=[1, 3], axes=[0, 2]), [X3]),
    "upsample_attr_7": (7, helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 2.0], mode="nearest"), [X4]),
    "batchnorm_spatial_7": (7, None, [X4]),
    "dropout_ratio_attr_10": (10, helper.make_node("Dropout", ["x"], ["y"], ratio=0.3), [X3]),
    "softmax_coerced_axis_11": (11, helper.make_node("Softmax", ["x"], ["y"], axis=1), [X3]),
    "logsoftmax_last_axis_9": (9, helper.make_node("LogSoftmax", ["x"], ["y"], axis=2), [X3]),
    "topk_k_attr_9": (9, helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=-1), [X3]),
}


def _model(name):
    opset, node, inputs = CASES[name]
    inits = []
    if name == "batchnorm_spatial_7":
        from onnx import numpy_helper

        vals = [np.array([1.0, 2.0], np.float32), np.array([0.1, -0.1], np.float32),
                np.array([0.5, 0.0], np.float32), np.array([1.0, 4.0], np.float32)]
        names = ["s", "b", "m", "v"]
        inits = [numpy_helper.from_array(a, n) for a, n in zip(vals, names)]
        node = helper.make_node("BatchNormalization", ["x", *names], ["y"], epsilon=1e-5, spatial=1)
    node.name = name
    outs = [tensor_info(o, None) for o in node.output]
    if name == "topk_k_attr_9":
        outs = [tensor_info("v", None), helper.make_tensor_value_info("i", 7, None)]
    model = make_model([node], [tensor_info("x", list(inputs[0].shape))], outs, inits, opset=opset)
    model.ir_version = 6
    return model, inputs


@pytest.mark.parametrize("name", sorted(CASES))
def test_old_opset_matches_onnxruntime(name):
    model, inputs = _model(name)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, {"x": inputs[0]})
    module = onnxport.import_model(model, backend="torch")
    with torch.no_grad():
        out = module(torch.from_numpy(inputs[0]))
    out = out if isinstance(out, tuple) else (out,)
    for e, a in zip(expected, out):
        np.testing.assert_allclose(a.numpy(), e, rtol=1e-5, atol=1e-6)
        assert a.numpy().dtype == e.dtype


@pytest.mark.parametrize("case", ADAPTER_CASES, ids=lambda c: c.name)
def test_adapter_case_imports_into_torch(case):
    """Every adapter's case (onnxport_testkit.adapter_cases) imported into torch matches its
    reference: onnxruntime on the old model, or the stated numpy reference where onnxruntime cannot."""
    check_import(case, "torch")
