"""Every torch export primitive's declared samples: trace, export, checker, onnxruntime, ops.

Each sample is exported once with dim 0 of every input left to torch (``Dim.AUTO``: symbolic
where the module allows it), then checked in onnxruntime at the example size and, where the
graph kept the dim symbolic, at a larger one. This is what exercises the symbolic-size
primitives (``aten.sym_size.int``, ``operator.mul`` ...).
"""

from __future__ import annotations

import pytest
import torch

import onnxport
from onnxport_torch.exporter import run_sample

from ._export_check import check_model, compare, op_types

_PRIMS = onnxport.registry().exports("torch")


def _cases():
    """One case per (primitive function, sample): stacked targets share their samples."""
    seen: set[tuple[int, int]] = set()
    targets: dict[int, list[str]] = {}
    for p in _PRIMS:
        targets.setdefault(id(p.fn), []).append(p.target)
    for p in _PRIMS:
        for i, s in enumerate(p.samples):
            if (id(p.fn), id(s)) in seen:
                continue
            seen.add((id(p.fn), id(s)))
            yield pytest.param(targets[id(p.fn)], s, id=f"{p.target}-{s.name or i}")


_CASES = list(_cases())


def test_every_primitive_has_samples():
    assert _PRIMS, "no torch export primitives registered"
    missing = [p.target for p in _PRIMS if not p.samples]
    assert not missing, f"export primitives without samples: {missing}"


def _grow(t: torch.Tensor) -> torch.Tensor:
    """One more row along dim 0, copied from the first (index tensors stay in range)."""
    return torch.cat([t, t[:1]], 0)


@pytest.mark.parametrize("targets,sample", _CASES)
def test_sample(targets, sample):
    args = sample.args
    dyn = tuple({0: torch.export.Dim.AUTO} if a.dim() and a.shape[0] > 1 else None for a in args)
    module = sample.fn.eval() if isinstance(sample.fn, torch.nn.Module) else sample.fn
    model = run_sample(sample.fn, args, dynamic_shapes=dyn)
    proto = check_model(model)
    tol = dict(rtol=max(sample.rtol, 1e-4), atol=max(sample.atol, 1e-4))
    compare(module, proto, args, **tol)
    traced = model.meta["onnxport.torch.targets"]
    assert set(targets) & set(traced), f"the sample exercises none of {targets}; traced: {traced}"
    missing = set(sample.emits) - op_types(model)
    assert not missing, f"expected ops {missing} not in {sorted(op_types(model))}"
    symbolic = [bool(v.shape is not None and len(v.shape) and not isinstance(v.shape[0], int)) for v in model.graph.inputs]
    if any(symbolic):
        compare(module, proto, tuple(_grow(a) if d else a for a, d in zip(args, symbolic)), **tol)
