"""Comparisons (eq, ne, lt, le, gt, ge) and logical/bitwise ops on booleans."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import Sample, exporter

from ...dtypes import to_onnx_dtype, to_torch_dtype

_A, _B = torch.randint(-3, 3, (2, 3, 4)).float(), torch.randint(-3, 3, (3, 4)).float()
_I = torch.randint(-3, 3, (2, 5))


def _common(g, a, b):
    """Both operands in torch's promoted type (a Python number adopts the tensor's type)."""
    if not isinstance(a, ir.Value):
        a, b = b, a
        swapped = True
    else:
        swapped = False
    if isinstance(b, ir.Value):
        dt = to_onnx_dtype(torch.promote_types(to_torch_dtype(a.dtype), to_torch_dtype(b.dtype)))
        out = g.cast(a, dt), g.cast(b, dt)
    else:
        dt = a.dtype
        if isinstance(b, float) and not to_torch_dtype(dt).is_floating_point:
            dt = ir.DataType.FLOAT
        out = g.cast(a, dt), g.scalar(b, dt)
    return (out[1], out[0]) if swapped else out


def _compare(onnx_op: str, negate: bool = False):
    def prim(g, a, b):
        y = g.op(onnx_op, *_common(g, a, b))
        return g.op("Not", y) if negate else y

    return prim


_CASES = {"eq": ("Equal", False), "ne": ("Equal", True), "lt": ("Less", False),
          "le": ("LessOrEqual", False), "gt": ("Greater", False), "ge": ("GreaterOrEqual", False)}

for _name, (_op, _neg) in _CASES.items():
    _prim = _compare(_op, _neg)
    _prim.__name__ = _prim.__qualname__ = _name
    _prim.__module__ = __name__
    _prim.__doc__ = f"aten.{_name} -> {_op}" + (" + Not" if _neg else "")
    _fn = getattr(torch, _name)
    globals()[_name] = exporter(
        f"aten.{_name}.Tensor", f"aten.{_name}.Scalar",
        samples=[Sample(_fn, (_A, _B), emits=(_op,), name="tensor"),
                 Sample(lambda x, f=_fn: f(x, 1), (_I,), emits=(_op,), name="int_scalar"),
                 Sample(lambda x, f=_fn: f(x, 0.5), (_I,), emits=(_op,), name="int_vs_float")],
    )(_prim)


def _logical(onnx_op: str):
    def prim(g, a, b):
        return g.op(onnx_op, g.cast(a, ir.DataType.BOOL), g.cast(b, ir.DataType.BOOL))

    return prim


_BOOLS = (torch.rand(3, 4) > 0.5, torch.rand(3, 4) > 0.5)
logical_and = exporter("aten.logical_and.default", samples=[Sample(torch.logical_and, _BOOLS, emits=("And",))])(_logical("And"))
logical_or = exporter("aten.logical_or.default", samples=[Sample(torch.logical_or, _BOOLS, emits=("Or",))])(_logical("Or"))


@exporter("aten.bitwise_and.Tensor", samples=[Sample(lambda a, b: a & b, _BOOLS, emits=("And",))])
def bitwise_and(g, a, b):
    if a.dtype != ir.DataType.BOOL or b.dtype != ir.DataType.BOOL:
        return g.op("BitwiseAnd", a, b)
    return g.op("And", a, b)


@exporter("aten.bitwise_or.Tensor", samples=[Sample(lambda a, b: a | b, _BOOLS, emits=("Or",))])
def bitwise_or(g, a, b):
    if a.dtype != ir.DataType.BOOL or b.dtype != ir.DataType.BOOL:
        return g.op("BitwiseOr", a, b)
    return g.op("Or", a, b)


@exporter("aten.bitwise_not.default", "aten.logical_not.default",
          samples=[Sample(lambda a: ~a, _BOOLS[:1], emits=("Not",), name="invert"),
                   Sample(torch.logical_not, _BOOLS[:1], emits=("Not",), name="logical")])
def bitwise_not(g, a):
    if a.dtype != ir.DataType.BOOL and g.fx.target.__name__.startswith("bitwise"):
        return g.op("BitwiseNot", a)
    return g.op("Not", g.cast(a, ir.DataType.BOOL))
