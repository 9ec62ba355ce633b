"""Widening layers of torch.onnx exports keeps the outputs (zeros and Net2Net initialisation)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from onnxport.edit.surgery import SizeAlignmentError, size_groups, widen_channels

from .test_surgery_prune import SHAPES, nets, run


@pytest.mark.parametrize("init", ["zeros", "net2net"])
@pytest.mark.parametrize("name", sorted(nets.NETS))
def test_widen_every_free_group_keeps_outputs(name: str, init: str) -> None:
    model = nets.onnx_bytes(name, False)
    x = np.random.default_rng(4).standard_normal(SHAPES[name]).astype(np.float32)
    expected = run(onnx.load_from_string(model), x)
    groups = size_groups(model)
    free = [g for g in groups if g.prunable and not g.mixes]
    for g in free[:2] + free[-2:]:  # residual and plain groups, kept short
        layer = g.producers[0].split("[")[0]
        out = widen_channels(model, layer, g.size + 3, init=init)
        onnx.checker.check_model(ir.serde.serialize_model(out), full_check=True)
        assert size_groups(out).group_of(layer).size == g.size + 3
        np.testing.assert_allclose(run(out, x), expected, rtol=1e-4, atol=1e-4)
    assert len(free) >= 2


def test_widen_refuses_what_would_change_outputs() -> None:
    model = nets.onnx_bytes("transformer", False)
    with pytest.raises(SizeAlignmentError, match="MatMul"):
        widen_channels(model, "/q/MatMul", 10)  # q.k contracts the head dim without a weight
    with pytest.raises(SizeAlignmentError, match="graph input"):
        widen_channels(model, "/o/MatMul", 20)
    with pytest.raises(SizeAlignmentError, match="widen to more"):
        widen_channels(model, "/fc1/MatMul", 8)
