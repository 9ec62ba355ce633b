"""Pruned models import into torch and fine-tune (JAX: tests/jax/test_surgery_jax.py)."""

from __future__ import annotations

import numpy as np
import pytest

import onnxport
from onnxport.edit.surgery import prune_channels, size_groups

from .test_surgery_prune import SHAPES, nets, run


def _pruned(name: str):
    return prune_channels(nets.onnx_bytes(name, False), fraction=0.3, per="layer")


@pytest.mark.parametrize("name", sorted(nets.NETS))
def test_pruned_model_fine_tunes_in_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    if "torch" not in onnxport.backends():
        pytest.skip("the torch backend is not installed")
    pruned = _pruned(name)
    assert sum(g.size for g in size_groups(pruned)) < sum(g.size for g in size_groups(nets.onnx_bytes(name, False)))
    x = np.random.default_rng(2).standard_normal(SHAPES[name]).astype(np.float32)
    module = onnxport.import_model(pruned, backend="torch")
    y = module(torch.from_numpy(x))
    np.testing.assert_allclose(y.detach().numpy(), run(pruned, x), rtol=1e-4, atol=1e-5)
    params = [p for p in module.parameters() if p.requires_grad]
    assert params
    before = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params, lr=0.1)
    loss = module(torch.from_numpy(x)).square().mean()
    loss.backward()
    opt.step()
    assert any(not torch.equal(a, p.detach()) for a, p in zip(before, params))
    assert module(torch.from_numpy(x)).square().mean().item() < loss.item()


def test_widened_inserted_and_removed_models_import_into_torch() -> None:
    torch = pytest.importorskip("torch")
    if "torch" not in onnxport.backends():
        pytest.skip("the torch backend is not installed")
    from onnxport.edit.surgery import insert_layer, remove_layer, widen_channels

    edits = {
        "densenet": widen_channels(nets.onnx_bytes("densenet", False), "/block/block.1/conv/Conv", 7, init="net2net"),
        "resnet": insert_layer(nets.onnx_bytes("resnet", False), after="/blocks/blocks.0/Relu_1_output_0",
                               layer="conv", kernel_size=3),
        "mobilenet": remove_layer(nets.onnx_bytes("mobilenet", False), "/blocks/blocks.2/body/body.0/Conv"),
    }
    for name, model in edits.items():
        x = np.random.default_rng(7).standard_normal(SHAPES[name]).astype(np.float32)
        module = onnxport.import_model(model, backend="torch")
        np.testing.assert_allclose(module(torch.from_numpy(x)).detach().numpy(), run(model, x),
                                   rtol=1e-4, atol=1e-5, err_msg=name)
