"""The edge-value variants (onnxport_testkit.edge) put what they say into the node cases."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from onnxport_testkit import edge
from onnxport_testkit.cases import node_cases


@pytest.fixture(scope="module")
def cases():
    return {c.name: c for c in node_cases()}


def test_every_declared_op_is_an_onnx_op_and_every_variant_is_known() -> None:
    for op, variants in edge.EDGE_OPS.items():
        assert onnx.defs.has(op), op
        assert set(variants) <= {edge.NONFINITE, edge.ZEROS, edge.EMPTY, edge.NEGAXIS}, op
    assert set(edge.EDGE_FAILURES) == {"torch", "jax", "tensorflow"}
    for table in edge.EDGE_FAILURES.values():
        for key, reason in table.items():
            assert reason.startswith(("[mismatch] ", "[")) and "]" in key, (key, reason)


def test_nonfinite_and_zeros_inputs(cases) -> None:
    case = cases["test_add"]
    assert {edge.NONFINITE, edge.ZEROS, edge.EMPTY} <= set(edge.edge_variants(case))
    _, inputs = edge.edge_model(case, edge.NONFINITE)
    for x in inputs:
        assert np.isnan(x).sum() == 1 and np.isposinf(x).sum() == 1 and np.isneginf(x).sum() == 1
    _, zeros = edge.edge_model(case, edge.ZEROS)
    assert all(not np.any(z) for z in zeros)


def test_empty_dimension(cases) -> None:
    model, inputs = edge.edge_model(cases["test_add"], edge.EMPTY)
    assert all(x.shape[0] == 0 for x in inputs)
    assert not model.graph.input[0].type.tensor_type.HasField("shape")


def test_negative_axis_follows_the_spec(cases) -> None:
    case = cases["test_softmax_axis_1"]
    assert edge.NEGAXIS in edge.edge_variants(case)
    model, inputs = edge.edge_model(case, edge.NEGAXIS)
    axis = next(a.i for a in model.graph.node[0].attribute if a.name == "axis")
    assert axis == 1 - np.asarray(inputs[0]).ndim
    # an op whose schema gives no negative axis gets no negaxis variant
    hardmax_1 = [c for c in cases.values() if c.ops == (("", "Hardmax"),) and c.opset < 11]
    for c in hardmax_1:
        assert edge.NEGAXIS not in edge.edge_variants(c)
