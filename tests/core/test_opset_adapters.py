"""Every opset adapter (up, on import) and down-adapter (on export) runs on a case at its
``from_version`` and keeps the model's numbers (onnxport_testkit.adapter_cases).

Up: the old-opset model, adapted by the core (``driver.adapt``) and written at a current opset,
runs in onnxruntime and matches onnxruntime on the old model itself (opset >= 7) or the case's
hand-written numpy reference (forms superseded before opset 7, which onnxruntime does not run).
Down: the newest-form node, down-converted (``export.downgrade``) for the opsets below the
adapter's bound (that bound - 1 and the lowest export opset), matches onnxruntime on the node at
its own opset. Each case checks that its adapter actually ran; the meta-tests check that every
registered adapter has a case.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from onnxport.errors import ConversionError
from onnxport.exporting.pipeline import MIN_OPSET, downgrade
from onnxport.importing.plan import adapt, infer_shapes
from onnxport.plugin.discovery import registry
from onnxport_testkit.adapter_cases import (
    ADAPTER_CASES,
    DOWN_CASES,
    AdapterCase,
    RecordingRegistry,
    case_opset,
    case_reference,
    every_adapter,
    node_model,
)
from onnxport_testkit.compare import compare_outputs
from onnxport_testkit.reference import run_onnxruntime

#: the opset the adapted (newest-form) models are written at for onnxruntime
RUN_OPSET = 21


def _feeds(case: AdapterCase) -> list[np.ndarray]:
    return list(case.inputs.values())


def adapted(case: AdapterCase) -> tuple[onnx.ModelProto, list]:
    """The case's model after the core's adapt step, at :data:`RUN_OPSET`; the adapters that ran."""
    model = ir.serde.deserialize_model(node_model(case))
    infer_shapes(model, strict=False)
    rec = RecordingRegistry(registry())
    adapt(model, rec)
    proto = ir.serde.serialize_model(model)
    for imp in proto.opset_import:
        if imp.domain in ("", "ai.onnx"):
            imp.version = RUN_OPSET
    return proto, rec.ran


def _ops(graph: onnx.GraphProto) -> set[str]:
    return {n.op_type for n in graph.node}


@pytest.mark.parametrize("case", ADAPTER_CASES, ids=lambda c: c.name)
def test_adapter_case_matches_reference(case: AdapterCase) -> None:
    assert onnx.defs.get_schema(case.op, case_opset(case)).since_version == case.version, case.name
    if case.refused:
        with pytest.raises(ConversionError, match=case.refused) as info:
            adapted(case)
        assert case.node.name in str(info.value)
        return
    expected = case_reference(case)
    model, ran = adapted(case)
    assert case.key in ran, f"{case.name}: the {case.op}-{case.version} adapter did not run (ran: {ran})"
    actual = run_onnxruntime(model, _feeds(case))
    assert len(actual) == len(expected) == len(case.outputs)
    for (name, _), e, a in zip(case.outputs, expected, actual):
        compare_outputs(e, a, name=f"{case.name}:{name}")


def _down_params() -> list:
    out = []
    for case in DOWN_CASES:
        for opset in sorted({case.version - 1, MIN_OPSET}):
            out.append(pytest.param(case, opset, id=f"{case.name}-opset{opset}"))
    return out


@pytest.mark.parametrize(("case", "opset"), _down_params())
def test_down_adapter_case_matches_onnxruntime(case: AdapterCase, opset: int) -> None:
    expected = run_onnxruntime(node_model(case, opset=case.version), _feeds(case))
    model = ir.serde.deserialize_model(node_model(case, opset=opset))
    rec = RecordingRegistry(registry())
    assert downgrade(model, rec) == 1
    assert rec.ran == [case.key], f"{case.name}: down-adapters that ran: {rec.ran}"
    proto = ir.serde.serialize_model(model)
    assert proto.opset_import[0].version == opset
    assert case.op not in _ops(proto.graph) or re.match("Reduce", case.op)
    actual = run_onnxruntime(proto, _feeds(case))
    assert len(actual) == len(expected) == 1
    compare_outputs(expected[0], actual[0], name=case.name)


def test_every_adapter_has_a_case() -> None:
    """An adapter or down-adapter without a case here fails (its cases assert that it ran)."""
    cases = {c.key for c in [*ADAPTER_CASES, *DOWN_CASES]}
    registered = every_adapter(registry())
    assert registered - cases == set(), f"adapters without a case: {sorted(registered - cases)}"
    assert cases - registered == set(), f"cases of adapters no longer registered: {sorted(cases - registered)}"


def test_adapter_case_names_are_unique() -> None:
    names = [c.name for c in [*ADAPTER_CASES, *DOWN_CASES]]
    assert len(names) == len(set(names))
