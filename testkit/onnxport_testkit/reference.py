"""Reference outputs: onnxruntime, or onnx.reference where onnxruntime lacks an op."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx


class ReferenceUnavailable(Exception):
    """Neither onnxruntime nor onnx.reference can run this model."""


def run_onnxruntime(model: onnx.ModelProto, inputs: list[Any]) -> list[Any]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    feeds = dict(zip(names, inputs))
    return sess.run(None, feeds)


def run_onnx_reference(model: onnx.ModelProto, inputs: list[Any]) -> list[Any]:
    """Outputs of ONNX's own reference evaluator (numpy, the spec's executable form)."""
    from onnx.reference import ReferenceEvaluator

    names = [i.name for i in model.graph.input]
    init = {i.name for i in model.graph.initializer}
    names = [n for n in names if n not in init]
    with np.errstate(all="ignore"):
        return list(ReferenceEvaluator(model).run(None, dict(zip(names, inputs))))


def run_reference(model: onnx.ModelProto, inputs: list[Any]) -> tuple[list[Any], str]:
    """Outputs of the model and which runtime produced them."""
    try:
        return run_onnxruntime(model, inputs), "onnxruntime"
    except Exception as ort_exc:  # noqa: BLE001 - fall back to the reference evaluator
        message = str(ort_exc)
        if "NOT_IMPLEMENTED" not in message and "Could not find an implementation" not in message:
            # onnxruntime runs the op but rejects these inputs (e.g. a OneHot depth < 1): no
            # runtime's answer for invalid inputs is a reference
            raise ReferenceUnavailable(f"onnxruntime rejects the inputs: {message[:300]}") from ort_exc
        try:
            return run_onnx_reference(model, inputs), "onnx.reference"
        except Exception as ref_exc:  # noqa: BLE001
            raise ReferenceUnavailable(f"onnxruntime: {ort_exc}; onnx.reference: {ref_exc}") from ref_exc
