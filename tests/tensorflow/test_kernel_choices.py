"""No kernel choice changes what the TensorFlow backend computes.

The Conv import picks its kernel form by whether TensorFlow runs oneDNN (a grouped convolution as
one Conv2D or one per group; SAME-equal pads as SAME or as a padded copy). Every Conv variant runs
here with each form forced that TensorFlow can run, against onnxruntime; and again in a subprocess under the other
``TF_ENABLE_ONEDNN_OPTS`` setting (TensorFlow reads it at import), with the light CNNs (seeded
random weights) beside them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

tf = pytest.importorskip("tensorflow", reason="the TensorFlow backend's tests run where tensorflow is installed")
import onnxruntime as ort  # noqa: E402

import onnxport  # noqa: E402
from onnxport_tensorflow.ops.import_ import conv as conv_ops  # noqa: E402

#: name -> (input shape, weight shape, Conv attributes)
CONVS: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict]] = {
    "plain_pads": ((2, 4, 9, 9), (6, 4, 3, 3), {"pads": [1, 1, 1, 1]}),
    "plain_asymmetric": ((2, 4, 9, 9), (6, 4, 3, 3), {"pads": [0, 1, 1, 0]}),
    "grouped_same": ((2, 8, 9, 9), (12, 4, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    "grouped_same_stride2": ((2, 8, 10, 10), (12, 2, 3, 3), {"group": 4, "pads": [0, 0, 1, 1], "strides": [2, 2]}),
    "grouped_auto_pad": ((1, 8, 7, 7), (8, 2, 3, 3), {"group": 4, "auto_pad": "SAME_UPPER"}),
    "grouped_not_same": ((2, 8, 9, 9), (12, 4, 3, 3), {"group": 2, "pads": [2, 0, 0, 2]}),
    "grouped_dilated": ((1, 6, 11, 11), (9, 2, 3, 3), {"group": 3, "pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    "grouped_valid": ((2, 8, 9, 9), (12, 4, 3, 3), {"group": 2}),
    "depthwise_same": ((2, 6, 9, 9), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),
    "depthwise_7x7": ((1, 16, 8, 8), (16, 1, 7, 7), {"group": 16, "pads": [3, 3, 3, 3]}),
    "depthwise_not_same": ((2, 6, 9, 9), (6, 1, 3, 3), {"group": 6, "pads": [1, 0, 2, 1]}),
    "depthwise_multiplier": ((2, 4, 9, 9), (8, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),
    "depthwise_stride2": ((1, 6, 10, 10), (6, 1, 3, 3), {"group": 6, "pads": [0, 0, 1, 1], "strides": [2, 2]}),
    "grouped_1d": ((2, 6, 12), (9, 2, 3), {"group": 3, "pads": [1, 1]}),
    "grouped_3d": ((1, 4, 5, 6, 5), (6, 2, 3, 3, 3), {"group": 2, "pads": [1, 1, 1, 1, 1, 1]}),
}


def conv_model(name: str) -> tuple[onnx.ModelProto, np.ndarray]:
    """A Conv (with bias) + Relu model of the variant ``name`` and its seeded input."""
    xs, ws, attrs = CONVS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    w = rng.uniform(-1, 1, ws).astype(np.float32)
    b = rng.uniform(-1, 1, ws[:1]).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=list(ws[2:]), **attrs),
         helper.make_node("Relu", ["c"], ["y"])], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return model, rng.standard_normal(xs).astype(np.float32)


def _ort(proto: onnx.ModelProto, inputs: list[np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip([i.name for i in sess.get_inputs()], inputs)))[0]


def _differs(proto: onnx.ModelProto, inputs: list[np.ndarray], rtol: float = 1e-4, atol: float = 1e-5) -> str:
    """'' when the TensorFlow import gives onnxruntime's output, else what differs."""
    expected = _ort(proto, inputs)
    got = onnxport.import_model(proto, backend="tensorflow")(*inputs).numpy()
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    bad = ~np.isclose(got, expected, rtol=rtol, atol=atol)
    return f"{int(bad.sum())} of {bad.size} values differ, by up to {np.abs(got - expected).max():.3g}" if bad.any() else ""


def conv_failures() -> dict[str, str]:
    """Every Conv variant with each kernel form forced that this TensorFlow runs (without oneDNN
    TensorFlow has no grouped Conv2D kernel, so only the split forms run there): what differs
    from onnxruntime."""
    from tensorflow.python.util import _pywrap_util_port

    out = {}
    saved = conv_ops._ONEDNN
    try:
        for choice in (False, True) if _pywrap_util_port.IsMklEnabled() else (False,):
            conv_ops._ONEDNN = choice
            for name in CONVS:
                proto, x = conv_model(name)
                why = _differs(proto, [x])
                if why:
                    out[f"{name}[onednn_form={choice}]"] = why
    finally:
        conv_ops._ONEDNN = saved
    return out


def light_failures(names: tuple[str, ...] = ("squeezenet", "shufflenet")) -> dict[str, str]:
    """The light CNNs (seeded random weights: the shipped ones are all 0.02, which leaves every
    logit equal, so the Softmax output hangs on ties) against onnxruntime."""
    from onnxport_testkit.light import light_models, random_inputs, randomized

    out = {}
    for name in names:
        proto = randomized(onnx.load(str(light_models()[name])))
        why = _differs(proto, random_inputs(proto), rtol=1e-4, atol=1e-6)
        if why:
            out[name] = why
    return out


def test_every_conv_form_matches_onnxruntime() -> None:
    assert conv_failures() == {}


def test_onednn_picks_the_native_forms_only_when_tensorflow_runs_it() -> None:
    from tensorflow.python.util import _pywrap_util_port

    assert conv_ops._ONEDNN == bool(_pywrap_util_port.IsMklEnabled())


def test_the_other_onednn_setting_computes_the_same() -> None:
    # TensorFlow reads TF_ENABLE_ONEDNN_OPTS when it is imported: the other setting needs a process
    other = "0" if os.environ.get("TF_ENABLE_ONEDNN_OPTS", "") == "1" else "1"
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": other, "TF_CPP_MIN_LOG_LEVEL": "3"}
    script = ("import json, sys; sys.path[:0] = sys.argv[1:]; import test_kernel_choices as t; "
              "from tensorflow.python.util import _pywrap_util_port as p; "
              "print(json.dumps({'onednn': bool(p.IsMklEnabled()), 'conv': t.conv_failures(), "
              "'light': t.light_failures()}))")
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", script, here, *sys.path], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["onednn"] == (other == "1")
    assert result["conv"] == {} and result["light"] == {}, result


def test_light_cnns_match_onnxruntime_in_this_setting() -> None:
    assert light_failures() == {}
