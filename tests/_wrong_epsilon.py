"""An exported LayerNormalization whose epsilon is 4x too large must fail its export sample, on every
run (shared by the backends' tests): the samples are seeded, compared at the import cases'
per-dtype tolerances, and one of them has a variance near epsilon."""

from __future__ import annotations

from typing import Any

import onnx
import pytest
from onnx import helper

from onnxport_testkit import runner


def wrong_epsilon(proto: onnx.ModelProto, factor: float = 4.0) -> onnx.ModelProto:
    """A copy of ``proto`` whose LayerNormalization nodes have ``factor`` times their epsilon."""
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    found = 0
    for node in out.graph.node:
        if node.op_type == "LayerNormalization":
            eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
            kept = [a for a in node.attribute if a.name != "epsilon"]
            del node.attribute[:]
            node.attribute.extend([*kept, helper.make_attribute("epsilon", eps * factor)])
            found += 1
    assert found, "the exported graph has no LayerNormalization"
    return out


def failing_samples(backend: str, target: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """Per sample of the export primitive ``target``: whether the testkit's sample test fails once
    the exported graph's LayerNormalization epsilon is 4x too large."""
    import onnxport

    prim = onnxport.registry().find_export(backend, target)
    assert prim is not None and prim.samples
    run_exported = runner.run_exported

    def mutated(backend_name: str, sample: Any, proto: onnx.ModelProto, inputs: list[Any], **kw: Any) -> list[Any]:
        return run_exported(backend_name, sample, wrong_epsilon(proto), inputs, **kw)

    out = {}
    for index, sample in enumerate(prim.samples):
        runner.run_export_sample(backend, prim, index, {})  # as exported: passes
        with monkeypatch.context() as m:
            m.setattr(runner, "run_exported", mutated)
            try:
                runner.run_export_sample(backend, prim, index, {})
                out[str(sample.name or index)] = False
            except AssertionError:
                out[str(sample.name or index)] = True
    return out
