"""to_sequential on graphs of rejoining blocks: Residual and Parallel containers in torch."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import onnxport
from onnxport.edit.surgery import prune_channels
from onnxport.errors import ModelError
from onnxport_torch.residual import Parallel, Residual

from ..core import _surgery_nets as nets


@pytest.mark.parametrize(("name", "fold"), [("resnet", True), ("resnet", False), ("mobilenet", False),
                                            ("densenet", True)])
def test_blocks_nest_and_match_the_flat_import(name: str, fold: bool) -> None:
    model = nets.onnx_bytes(name, fold)
    seq = onnxport.to_sequential(model, backend="torch")
    flat = onnxport.import_model(model, backend="torch")
    x = torch.randn(*nets.NETS[name][1])
    torch.testing.assert_close(seq(x), flat(x), rtol=1e-5, atol=1e-5)
    kinds = {type(m) for m in seq}
    if name == "densenet":
        assert Parallel in kinds  # concatenations: the input and the new features
    else:
        blocks = [m for m in seq if isinstance(m, Residual)]
        assert blocks and all(isinstance(b.body, nn.Sequential) for b in blocks)
        assert any(isinstance(b.shortcut, nn.Identity) for b in blocks)
        if name == "resnet":  # a downsampling block: the projection is the shortcut
            assert any(isinstance(b.shortcut, nn.Sequential) and isinstance(b.shortcut[0], nn.Conv2d)
                       for b in blocks)


def test_pruned_resnet_nests_and_trains() -> None:
    seq = onnxport.to_sequential(prune_channels(nets.onnx_bytes("resnet", False), fraction=0.3), backend="torch")
    seq.train()
    params = [p for p in seq.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.05)
    x = torch.randn(4, 3, 16, 16)
    loss = seq(x).square().mean()
    loss.backward()
    opt.step()
    assert all(p.grad is not None for p in params)
    seq[-1] = nn.Linear(seq[-1].in_features, 3)  # a new head, as in transfer learning
    assert seq(x).shape == (4, 3)


def test_attention_cannot_nest_and_says_where() -> None:
    with pytest.raises(ModelError, match="rejoin at"):
        onnxport.to_sequential(nets.onnx_bytes("transformer", True), backend="torch")
