"""Shared checks of exported models: checker, onnxruntime vs the module, emitted ops, names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import torch

from onnxport.importing.plan import iter_nodes


def flatten(out: Any) -> list[torch.Tensor]:
    """Tensor leaves of a module's output, in pytree order (as torch.export orders outputs)."""
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    return [t for t in leaves if isinstance(t, torch.Tensor)]


def op_types(model: ir.Model) -> set[str]:
    ops = {n.op_type for n in iter_nodes(model.graph)}
    for fn in model.functions.values():
        ops |= {n.op_type for n in fn}
    return ops


def check_model(model: ir.Model) -> onnx.ModelProto:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    return proto


def run_ort(proto: onnx.ModelProto, args: Sequence[torch.Tensor]) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    assert len(names) == len(args), f"graph inputs {names} vs {len(args)} example inputs"
    return sess.run(None, {n: a.detach().numpy() for n, a in zip(names, args)})


def compare(module: Any, proto: onnx.ModelProto, args: Sequence[torch.Tensor], *, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """The ONNX model and the module agree on ``args`` (dtypes exact, values within tolerance)."""
    with torch.no_grad():
        expected = flatten(module(*args))
    got = run_ort(proto, args)
    assert len(got) == len(expected), f"{len(got)} ONNX outputs, {len(expected)} torch outputs"
    for i, (g, e) in enumerate(zip(got, expected)):
        e = e.detach().numpy()
        assert g.dtype == e.dtype, f"output {i}: dtype {g.dtype} != torch {e.dtype}"
        assert g.shape == e.shape, f"output {i}: shape {g.shape} != torch {e.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"output {i}")
