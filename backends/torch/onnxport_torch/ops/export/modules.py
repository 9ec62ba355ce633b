"""Module primitives: a whole call of a torch module as ONNX (nn.LocalResponseNorm -> LRN).

``torch.export`` traces a module's ``forward`` into ATen ops; for some modules one ONNX op says
the same thing (``nn.LocalResponseNorm`` traces to pad / avg_pool3d / pow / div, ONNX has LRN).
A module primitive, registered for a module class with :func:`onnxport.module_exporter` (the
registry refuses a second one for the same class), replaces each
call of a module of exactly that class (a subclass may change ``forward``) found in the traced
graph: it receives the module and the call's tensor inputs (ir.Values, in the order the traced
code first reads them) and returns the call's result. ``when(module, *inputs)`` (the traced
tensors) says whether a call can be exported so; a call it declines, or one whose traced ops do
not form a single-result block, is exported op by op as usual.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from onnxport import module_exporter
from onnxport.plugin.registry import ModuleExportPrimitive


def find_module_export(registry: Any, module: Any, inputs: list[Any]) -> ModuleExportPrimitive | None:
    """The primitive exporting this call of ``module`` (``inputs``: its traced tensors), or None."""
    prim = registry.find_module_export("torch", type(module))
    if prim is None or (prim.when is not None and not prim.when(module, *inputs)):
        return None
    return prim


_LRN_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _lrn_exportable(m, *inputs):
    # torch's window for an even size is [c - size/2, c + size/2 - 1], ONNX's [c - size/2 + 1, c + size/2]
    return (len(inputs) == 1 and isinstance(inputs[0], torch.Tensor) and inputs[0].dim() >= 3
            and inputs[0].dtype in _LRN_DTYPES and int(m.size) % 2 == 1)


@module_exporter(nn.LocalResponseNorm, when=_lrn_exportable)
def local_response_norm(g, m, x):
    """LRN (size, alpha, beta, bias=k: the same formula); runtimes take 4-D input only, so other
    ranks go through a 4-D view (the sum runs over channels, position by position)."""
    attrs = dict(size=int(m.size), alpha=float(m.alpha), beta=float(m.beta), bias=float(m.k))
    rank = g.rank(x)
    if rank == 4:
        return g.op("LRN", x, **attrs)
    if rank == 3:
        last = g.const(np.asarray([3], dtype=np.int64))
        return g.op("Squeeze", g.op("LRN", g.op("Unsqueeze", x, last), **attrs), last)
    flat = g.op("Reshape", x, g.const(np.asarray([0, 0, -1, 1], dtype=np.int64)))
    return g.op("Reshape", g.op("LRN", flat, **attrs), g.op("Shape", x))
