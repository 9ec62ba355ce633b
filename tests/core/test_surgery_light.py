"""Surgery on the zoo models the onnx package ships (light_*: weights as ConstantOfShape)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

from onnxport.edit.surgery import prune_channels, size_groups, widen_channels

light = pytest.importorskip("onnxport_testkit.light")


def _run(model, path) -> np.ndarray:
    proto = model if isinstance(model, onnx.ModelProto) else ir.serde.serialize_model(model)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    xs = light.light_inputs(onnx.load(path))
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})[0]


@pytest.mark.parametrize("name", ["squeezenet", "resnet50", "inception_v2"])
def test_light_models_prune_and_run(name: str) -> None:
    path = light.light_models()[name]
    before = size_groups(path)
    free = [g for g in before if g.prunable]
    assert len(free) >= len(list(before)) - 2  # only the input and output groups are fixed
    pruned = prune_channels(path, fraction=0.3)
    onnx.checker.check_model(ir.serde.serialize_model(pruned), full_check=True)
    after = {g.name: g.size for g in size_groups(pruned)}
    assert all(after[g.name] == g.size - int(0.3 * g.size) for g in free)
    assert _run(pruned, path).shape == _run(onnx.load(path), path).shape


def test_light_squeezenet_widens_without_changing_outputs() -> None:
    path = light.light_models()["squeezenet"]
    groups = size_groups(path)
    layer = [g for g in groups if g.prunable][3].producers[0]  # a fire module's squeeze/expand
    wide = widen_channels(path, layer, size_groups(path).group_of(layer).size + 5, init="net2net")
    np.testing.assert_allclose(_run(wide, path), _run(onnx.load(path), path), rtol=1e-4, atol=1e-6)
