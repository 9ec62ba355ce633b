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


def custom_op_types(model: onnx.ModelProto) -> list[tuple[str, str]]:
    """``(domain, op_type)`` of every node outside the ONNX domains (subgraphs and functions included)."""
    standard = {"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"}
    local = {(f.domain, f.name) for f in model.functions}
    found: dict[tuple[str, str], None] = {}

    def walk(nodes) -> None:
        for n in nodes:
            if n.domain not in standard and (n.domain, n.op_type) not in local:
                found[(n.domain, n.op_type)] = None
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g.node)
                for g in a.graphs:
                    walk(g.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return list(found)


def run_with_custom_ops(model: onnx.ModelProto, inputs: list[Any], reference: Any) -> list[Any]:
    """Run ``model`` in onnx.reference, its custom-domain ops computed by numpy functions.

    ``reference`` maps ``"domain::Op"`` to ``fn(*inputs, **attributes)`` (one output, or a tuple),
    or is one such function when the model has exactly one custom op type.
    """
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import OpRun

    custom = custom_op_types(model)
    if callable(reference):
        if len(custom) != 1:
            labels = [f"{d}::{op}" for d, op in custom]
            raise AssertionError(
                f"the sample's reference is one function, but the exported graph has {len(custom)} custom "
                f"op types {labels}: give reference={{'domain::Op': fn, ...}}"
            )
        table = {f"{custom[0][0]}::{custom[0][1]}": reference}
    else:
        table = dict(reference)
    missing = [f"{d}::{op}" for d, op in custom if f"{d}::{op}" not in table]
    if missing:
        raise AssertionError(f"the exported graph has custom ops {missing} that the sample's reference does not implement")

    def op_class(label: str, fn: Any) -> type:
        domain, op_type = label.rsplit("::", 1)

        def _run(self, *args: Any, **attributes: Any) -> tuple[Any, ...]:
            out = fn(*args, **attributes)
            return tuple(np.asarray(o) for o in out) if isinstance(out, (tuple, list)) else (np.asarray(out),)

        return type(op_type, (OpRun,), {"op_domain": domain, "_run": _run})

    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    evaluator = ReferenceEvaluator(model, new_ops=[op_class(k, f) for k, f in table.items()])
    with np.errstate(all="ignore"):
        return list(evaluator.run(None, dict(zip(names, inputs))))
