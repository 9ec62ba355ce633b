"""The torch backend's export hooks for the testkit's generated sample tests.

Every declared sample runs as ``test_onnx_export_sample`` / ``test_onnx_roundtrip`` in
``tests/test_generated.py``; these tests check that the torch-specific parts of those runs
(symbolic batch, the larger batch, traced targets, parameter names) really take effect.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import onnxport
from onnxport_testkit import runner


def _prim(target: str):
    return onnxport.plugin.registry().find_export("torch", target)


def test_sample_is_also_run_at_a_larger_batch(monkeypatch):
    """A sample whose dim 0 stays symbolic runs in onnxruntime at its size and one row more."""
    from onnxport_testkit import reference

    shapes: list[tuple[int, ...]] = []
    run = reference.run_onnxruntime

    def spy(model, inputs):
        shapes.append(tuple(inputs[0].shape))
        return run(model, inputs)

    monkeypatch.setattr(reference, "run_onnxruntime", spy)
    prim = _prim("aten.sym_size.int")
    runner.run_export_sample("torch", prim, 0, {})
    assert shapes == [(4, 6), (5, 6)]


def test_prepared_sample_is_in_eval_mode_with_a_symbolic_batch():
    backend = onnxport.get_backend("torch")
    sample = _prim("aten._native_batch_norm_legit_no_training.default").samples[0]
    sample.fn.train()
    ready, options = backend.prepare_export_sample(sample)
    assert not ready.fn.training
    assert options["dynamic_shapes"] == ({0: torch.export.Dim.AUTO},)


def test_sample_must_trace_its_own_primitive():
    """A sample that never reaches its primitive's ATen op fails the check."""
    backend = onnxport.get_backend("torch")
    relu = _prim("aten.relu.default")
    sample = _prim("aten.tanh.default").samples[0]
    model = backend.export_model(sample.fn, sample.args)
    with pytest.raises(AssertionError, match="exercises none of"):
        backend.check_exported_sample(relu, sample, model)
    backend.check_exported_sample(_prim("aten.tanh.default"), sample, model)


def test_round_trip_keeps_parameter_names():
    backend = onnxport.get_backend("torch")
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).eval()
    sample = onnxport.Sample(m, (torch.randn(2, 4),))
    imported = onnxport.import_model(backend.export_model(m, sample.args), backend="torch")
    backend.check_roundtrip(sample, imported)
    assert sorted(dict(imported.named_parameters())) == sorted(dict(m.named_parameters()))
    with torch.no_grad():
        imported.get_submodule("2").weight.add_(1.0)
    with pytest.raises(AssertionError, match="changed"):
        backend.check_roundtrip(sample, imported)


def test_plain_function_export_and_kwargs():
    backend = onnxport.get_backend("torch")
    model = backend.export_model(lambda x, y: x * y, (torch.randn(3), torch.randn(3)))
    assert [n.op_type for n in model.graph] == ["Mul"]

    class Scaled(nn.Module):
        def forward(self, x, *, scale):
            return x * scale

    model = backend.export_model(Scaled(), (torch.randn(3),), example_kwargs={"scale": torch.randn(3)})
    assert len(model.graph.inputs) == 2
    with pytest.raises(onnxport.InputError, match="not int"):
        backend.export_model(3, ())
