"""Pruning channels of torch.onnx exports: dead channels go, outputs stay, every backend imports."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

from onnxport.edit.surgery import prune_channels, size_groups
from onnxport.edit.surgery._model import const_array
from onnxport.edit.surgery.groups import OUT_ROLES, channel_indices

pytest.importorskip("torch")
from . import _surgery_nets as nets  # noqa: E402

SHAPES = {name: shape for name, (_, shape) in nets.NETS.items()}


def run(model, x: np.ndarray) -> np.ndarray:
    proto = model if isinstance(model, onnx.ModelProto) else ir.serde.serialize_model(model)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def kill_channels(model_bytes: bytes, fraction: float = 0.3) -> tuple[ir.Model, dict[int, np.ndarray]]:
    """The model with ``fraction`` of every prunable group's channels made dead (producer weights 0)."""
    groups = size_groups(model_bytes)
    rng = np.random.default_rng(0)
    keep = {}
    for g in groups:
        if not g.prunable:
            continue
        drop = max(1, int(fraction * g.size))
        dead = np.sort(rng.choice(g.size, drop, replace=False))
        keep[g.id] = np.setdiff1d(np.arange(g.size), dead)
        for m in g.params:
            if m.role not in OUT_ROLES:
                continue
            arr = m.value.const_value.numpy().copy()
            everything = {s.group: np.arange(groups[s.group].size) for s in m.layout}
            gone = channel_indices({x.id: x for x in groups}, m.layout, {**everything, g.id: dead})
            idx = [slice(None)] * arr.ndim
            idx[m.axis] = gone
            arr[tuple(idx)] = 0
            m.value.const_value = ir.tensor(arr, name=m.value.name)
    return groups.model, keep


EXPORTS = [(name, fold, False) for name in sorted(nets.NETS) for fold in (True, False)]
EXPORTS += [("resnet", True, True), ("transformer", True, True)]  # the dynamo exporter's graphs


@pytest.mark.parametrize(("name", "fold", "dynamo"), EXPORTS,
                         ids=[f"{n}-{'dynamo' if d else 'folded' if f else 'unfolded'}" for n, f, d in EXPORTS])
def test_dead_channels_pruned_keep_outputs(name: str, fold: bool, dynamo: bool) -> None:
    model, keep = kill_channels(nets.onnx_bytes(name, fold, dynamo))
    assert keep, "every test net has prunable groups"
    before = {g.id: g.size for g in size_groups(model)}
    x = np.random.default_rng(1).standard_normal(SHAPES[name]).astype(np.float32)
    expected = run(model, x)
    for pruned in (prune_channels(model, keep=keep), prune_channels(model, fraction=0.3, per="layer")):
        proto = ir.serde.serialize_model(pruned)
        onnx.checker.check_model(proto, full_check=True)
        onnx.shape_inference.infer_shapes(proto, strict_mode=True)
        np.testing.assert_allclose(run(pruned, x), expected, rtol=1e-4, atol=1e-5)
        after = sorted(g.size for g in size_groups(pruned))
        assert after == sorted(len(keep[g]) if g in keep else n for g, n in before.items())
    assert expected.shape == run(pruned, x).shape


def test_input_model_is_not_changed() -> None:
    model, keep = kill_channels(nets.onnx_bytes("resnet"))
    snapshot = ir.serde.serialize_model(model).SerializeToString()
    prune_channels(model, keep=keep)
    assert ir.serde.serialize_model(model).SerializeToString() == snapshot


def test_head_dim_is_pruned_in_every_head_of_q_and_k() -> None:
    model = nets.onnx_bytes("transformer", True)
    groups = size_groups(model)
    head = groups["/q/MatMul"]
    assert head is groups["/k/MatMul"] and head.size == 8  # q.k contracts the head dim: one group
    assert groups["/v/MatMul"] is not head
    pruned = prune_channels(model, keep={"/q/MatMul": [0, 1, 2, 3, 4]})
    q_weight = [n.inputs[1] for n in pruned.graph if n.name == "/q/MatMul"][0]
    assert tuple(q_weight.shape) == (16, 10)  # 2 heads x 5
    targets = [const_array(n.inputs[1]).tolist() for n in pruned.graph if n.op_type == "Reshape"]
    assert [2, 6, 2, 5] in targets and [2, 6, 2, 8] in targets  # q, k split; v keeps its 8
    x = np.random.default_rng(1).standard_normal(SHAPES["transformer"]).astype(np.float32)
    assert run(pruned, x).shape == (2, 6, 16)
    original = onnx.load_from_string(model)
    assert [n.name for n in pruned.graph] == [n.name for n in original.graph.node]  # nothing renamed or lost
    assert {o for n in original.graph.node for o in n.output} == {
        v.name for n in pruned.graph for v in n.outputs}


def test_reshape_target_concatenated_from_run_time_dims_follows() -> None:
    model, keep = kill_channels(nets.dynamic_transformer())  # Reshape(t, Concat(b, s, 2, 8))
    groups = size_groups(model)
    assert groups["/q/MatMul"].prunable and groups["/q/MatMul"].size == 8
    x = np.random.default_rng(2).standard_normal((3, 5, 16)).astype(np.float32)  # not the export's sizes
    pruned = prune_channels(model, keep=keep)
    np.testing.assert_allclose(run(pruned, x), run(model, x), rtol=1e-4, atol=1e-5)
