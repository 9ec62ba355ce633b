"""The torch import computes the same answer whichever vector kernels ATen picks for the CPU.

ATen chooses its CPU kernels (default, AVX2, AVX-512) by the CPU, or by ``ATEN_CPU_CAPABILITY``
(read when torch is imported, capped to what the CPU has). Ops whose kernels disagree at
non-finite inputs (Gelu at +-inf, Sign at NaN) run here in a subprocess per capability, against
onnxruntime, with NaN where onnxruntime has NaN.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

#: (op, attributes): one-input float ops whose torch kernels disagree at non-finite values
OPS = [("Gelu", {}), ("Gelu", {"approximate": "tanh"}), ("Sign", {})]
#: every special value at every lane of a 16-wide vector and in a scalar tail
X = np.tile(np.asarray([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0e38, -3.0e38, 1.5, -1.5, 10.0, -10.0],
                       dtype=np.float32), 7)[:67]


def _model(op: str, attrs: dict) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], op,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(X)])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(X)])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


_SCRIPT = """
import json, sys
import numpy as np, onnx, torch
import onnxport
x = np.asarray(json.loads(sys.stdin.read())["x"], dtype=np.float32)
out = {"capability": torch.backends.cpu.get_cpu_capability(), "y": []}
for path in sys.argv[1:]:
    model = onnxport.import_model(path, backend="torch")
    out["y"].append(model(torch.from_numpy(x)).numpy().tolist())
print(json.dumps(out))
"""


@pytest.mark.parametrize("capability", ["default", "avx2", "avx512"])
def test_nonfinite_answers_do_not_depend_on_the_cpu_kernel(capability: str, tmp_path) -> None:
    paths = []
    for i, (op, attrs) in enumerate(OPS):
        path = tmp_path / f"{i}.onnx"
        onnx.save(_model(op, attrs), str(path))
        paths.append(str(path))
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *paths], input=json.dumps({"x": X.tolist()}),
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["capability"] == "DEFAULT" or capability != "default"  # the cap is honoured
    for (op, attrs), path, got in zip(OPS, paths, result["y"]):
        expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": X})[0]
        got = np.asarray([np.nan if v is None else v for v in got], dtype=np.float32)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True,
                                   err_msg=f"{op} {attrs} under {result['capability']}")
