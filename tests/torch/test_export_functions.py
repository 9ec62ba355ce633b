"""``export_model(functions=True)``: a submodule called more than once becomes one local function."""

from __future__ import annotations

import onnx_ir as ir
import pytest
import torch
from torch import nn
from torch.export import Dim

import onnxport
from onnxport_torch.exporter import FUNCTION_DOMAIN

from ._export_check import check_model, compare, flatten

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.lin = nn.Linear(c, c)
        self.norm = nn.LayerNorm(c)

    def forward(self, x):
        return self.norm(torch.relu(self.lin(x)) + x)


class Reused(nn.Module):
    """One block applied twice, a layer reused in a loop, a block called once, a nested reuse."""

    def __init__(self):
        super().__init__()
        self.block = Block()
        self.layers = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        x = self.block(self.block(x))
        for _ in range(3):
            x = self.layers[0](x)
        x = self.layers[1](x)
        return self.head(x), self.block(x)


class Outer(nn.Module):
    """A repeated module that itself calls a submodule twice: the outer one is the function."""

    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(8, 8)

    def forward(self, x):
        return self.inner(torch.tanh(self.inner(x)))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.outer = Outer()

    def forward(self, x):
        return self.outer(self.outer(x) * 2)


def _calls(model: ir.Model) -> list[str]:
    return [n.op_type for n in model.graph if n.domain == FUNCTION_DOMAIN]


def _check(module, args, model):
    proto = check_model(model)
    compare(module, proto, args)
    back = onnxport.import_model(model, backend="torch")
    with torch.no_grad():
        for got, want in zip(flatten(back(*args)), flatten(module(*args)), strict=True):
            assert (got - want).abs().max() < 1e-4
    return back


def test_repeated_modules_become_one_function_each():
    m = Reused().eval()
    x = torch.randn(2, 8)
    model = onnxport.export_model(m, (x,), functions=True)
    assert sorted(f.name for f in model.functions.values()) == ["Block_block", "Block_layers_0"]
    assert _calls(model) == ["Block_block", "Block_block"] + ["Block_layers_0"] * 3 + ["Block_block"]
    assert model.opset_imports[FUNCTION_DOMAIN] == 1
    # weights are function inputs: one initializer each, same count as without functions
    plain = onnxport.export_model(m, (x,))
    assert sorted(model.graph.initializers) == sorted(plain.graph.initializers)
    fn = model.functions[(FUNCTION_DOMAIN, "Block_block", "")]
    assert not any(v.const_value is not None for v in fn.graph.inputs)
    calls = [n for n in model.graph if n.op_type == "Block_block"]
    assert {tuple(v.name for v in n.inputs[1:]) for n in calls} == {
        ("block.lin.weight", "block.lin.bias", "block.norm.weight", "block.norm.bias")
    }
    # layers.1 runs once: inlined
    assert any(n.name.startswith("layers.1.lin/") for n in model.graph)
    assert len(list(model.graph)) < len(list(plain.graph))
    back = _check(m, (x,), model)
    assert sum(1 for name, _ in back.named_modules() if name.startswith("onnx_functions.")) == 2


def test_functions_off_by_default_and_dynamic_batch():
    m = Reused().eval()
    x = torch.randn(3, 8)
    assert not onnxport.export_model(m, (x,)).functions
    model = onnxport.export_model(m, (x,), functions=True, dynamic_shapes=({0: Dim("batch")},))
    assert len(model.functions) == 2
    assert model.graph.inputs[0].shape[0] == "batch"
    _check(m, (x,), model)
    _check(m, (torch.randn(5, 8),), model)


def test_nested_reuse_and_old_opset():
    m = Nested().eval()
    x = torch.randn(2, 8)
    model = onnxport.export_model(m, (x,), functions=True, opset=13)
    assert [f.name for f in model.functions.values()] == ["Outer_outer"]
    assert _calls(model) == ["Outer_outer", "Outer_outer"]
    assert [n.op_type for n in model.functions[(FUNCTION_DOMAIN, "Outer_outer", "")]].count("Gemm") == 2
    _check(m, (x,), model)


def test_calls_with_different_shapes_do_not_share_a_body():
    class TwoShapes(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.Sequential(nn.Flatten(), nn.Softmax(-1))

        def forward(self, x, y):
            return self.act(x), self.act(y), self.act(y + 1)

    m = TwoShapes().eval()
    args = (torch.randn(2, 3, 4), torch.randn(2, 5, 2))
    model = onnxport.export_model(m, args, functions=True)
    assert _calls(model) == ["Sequential_act", "Sequential_act"]
    _check(m, args, model)


def test_no_repeated_module_means_no_function():
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
    model = onnxport.export_model(m, (torch.randn(1, 4),), functions=True)
    assert not model.functions
    assert _calls(model) == []


@pytest.mark.parametrize("functions", [False, True])
def test_functions_flag_keeps_outputs(functions):
    m = Nested().eval()
    x = torch.randn(2, 8)
    model = onnxport.export_model(m, (x,), functions=functions)
    assert bool(model.functions) == functions
    compare(m, check_model(model), (x,))


def test_shared_layer_with_symbolic_sizes_is_one_function_for_every_call():
    """torch.export computes the batch-size arithmetic once (in the first call) and reuses it;
    those size nodes stay outside the calls, so the first call matches the others."""

    class Looped(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)

        def forward(self, x):
            for _ in range(3):
                x = self.layer(x)
            return x

    m = Looped().eval()
    x = torch.randn(2, 5, 16)
    model = onnxport.export_model(m, (x,), functions=True, dynamic_shapes=({0: Dim("batch")},))
    assert _calls(model) == ["TransformerEncoderLayer_layer"] * 3
    assert "Softmax" not in {n.op_type for n in model.graph}
    _check(m, (x,), model)
    _check(m, (torch.randn(4, 5, 16),), model)
