"""The torch exporter takes dynamic shapes in the form every backend accepts: one dict per input
from axis to a dim name."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import onnxruntime as ort
import torch

import onnxport


def test_torch_accepts_dict_dynamic_shapes() -> None:
    lin = torch.nn.Linear(4, 2).eval()
    model = onnxport.export_model(lin, (torch.randn(3, 4),), dynamic_shapes=({0: "batch"},))
    proto = ir.to_proto(model)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {proto.graph.input[0].name: x})[0]
    np.testing.assert_allclose(got, lin(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
