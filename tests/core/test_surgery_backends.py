"""Pruned models import into the installed backends: torch fine-tunes them, JAX runs them."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import onnxport
from onnxport.edit import prune_channels, size_groups

from ..conftest import make_model, tensor_info
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


@pytest.mark.parametrize("name", ["densenet", "transformer"])
def test_pruned_model_runs_in_jax(name: str) -> None:
    pytest.importorskip("jax")
    if "jax" not in onnxport.backends():
        pytest.skip("the jax backend is not installed")
    pruned = _pruned(name)
    x = np.random.default_rng(3).standard_normal(SHAPES[name]).astype(np.float32)
    fn = onnxport.import_model(pruned, backend="jax")
    np.testing.assert_allclose(np.asarray(fn(x)), run(pruned, x), rtol=1e-4, atol=1e-5)


def test_to_sequential_nests_blocks_in_jax() -> None:
    jax = pytest.importorskip("jax")
    if "jax" not in onnxport.backends():
        pytest.skip("the jax backend is not installed")
    from onnxport_jax.sequential import Identity, Parallel, Residual, Sequential

    model = nets.onnx_bytes("densenet", True)
    seq = onnxport.to_sequential(model, backend="jax")
    assert isinstance(seq, Sequential) and sum(isinstance(s, Parallel) for s in seq) == 3
    assert all(isinstance(s.branches[0], Identity) for s in seq if isinstance(s, Parallel))
    x = np.random.default_rng(6).standard_normal(SHAPES["densenet"]).astype(np.float32)
    y = jax.jit(seq.apply)(seq.params, x)
    np.testing.assert_allclose(np.asarray(y), run(onnx.load_from_string(model), x), rtol=1e-4, atol=1e-5)
    grads = jax.grad(lambda p: seq.apply(p, x).sum())(seq.params)
    assert jax.tree_util.tree_structure(grads) == jax.tree_util.tree_structure(seq.params)

    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Sigmoid", ["a"], ["b"], name="sig"),
             helper.make_node("Add", ["a", "b"], ["y"], name="residual")]
    small = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    seq = onnxport.to_sequential(small, backend="jax")
    assert isinstance(seq[1], Residual) and isinstance(seq[1].shortcut, Identity)
    v = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_allclose(np.asarray(seq(v)), np.maximum(v, 0) + 1 / (1 + np.exp(-np.maximum(v, 0))), rtol=1e-6)
