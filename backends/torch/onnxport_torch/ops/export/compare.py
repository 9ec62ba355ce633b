"""Comparisons (eq, ne, lt, le, gt, ge), logical_and/or/xor/not and bitwise and/or/xor/not (with the
__and__/__or__/__xor__ forms) -> Equal, Less ..., And/Or/Xor/Not, BitwiseAnd ... (opset 18)."""

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
_INTS = (torch.randint(-9, 9, (3, 4)), torch.randint(-9, 9, (4,), dtype=torch.int32))
logical_and = exporter("aten.logical_and.default", samples=[Sample(torch.logical_and, _BOOLS, emits=("And",))])(_logical("And"))
logical_or = exporter("aten.logical_or.default", samples=[Sample(torch.logical_or, _BOOLS, emits=("Or",))])(_logical("Or"))
logical_xor = exporter("aten.logical_xor.default", samples=[Sample(torch.logical_xor, (_BOOLS[0], _I[:1, :4] - 1.0), emits=("Xor",))])(
    _logical("Xor"))


def _bitwise(g, bool_op, int_op, a, b):
    """Booleans -> the logical op; integers (in the promoted type) -> the Bitwise op (opset 18)."""
    dt = g.out_dtype()
    a, b = g.tensor(a, dt), g.tensor(b, dt)
    if dt == ir.DataType.BOOL:
        return g.op(bool_op, a, b)
    if g.opset < 18:
        raise g.error(f"{int_op} on integers needs opset 18")
    return g.op(int_op, a, b)


@exporter("aten.bitwise_and.Tensor", samples=[Sample(lambda a, b: a & b, _BOOLS, emits=("And",)),
                                              Sample(torch.bitwise_and, _INTS, emits=("BitwiseAnd",), name="int")])
@exporter("aten.bitwise_and.Scalar", samples=[Sample(lambda a: torch.bitwise_and(a, 6), _INTS[:1], emits=("BitwiseAnd",))])
@exporter("aten.__and__.Tensor", samples=[Sample(lambda a, b: a & b, _BOOLS, emits=("And",)),
                                          Sample(lambda a, b: a & b, _INTS, emits=("BitwiseAnd",), name="int")])
@exporter("aten.__and__.Scalar", samples=[Sample(lambda a: a & True, _BOOLS[:1], emits=("And",))])
def bitwise_and(g, a, b):
    return _bitwise(g, "And", "BitwiseAnd", a, b)


@exporter("aten.bitwise_or.Tensor", samples=[Sample(lambda a, b: a | b, _BOOLS, emits=("Or",))])
@exporter("aten.bitwise_or.Scalar", samples=[Sample(lambda a: torch.bitwise_or(a, 6), _INTS[:1], emits=("BitwiseOr",))])
@exporter("aten.__or__.Tensor", samples=[Sample(lambda a, b: a | b, _BOOLS, emits=("Or",)),
                                         Sample(lambda a, b: a | b, _INTS, emits=("BitwiseOr",), name="int")])
@exporter("aten.__or__.Scalar", samples=[Sample(lambda a: a | 3, _INTS[:1], emits=("BitwiseOr",))])
def bitwise_or(g, a, b):
    return _bitwise(g, "Or", "BitwiseOr", a, b)


@exporter("aten.bitwise_xor.Tensor", samples=[Sample(torch.bitwise_xor, _BOOLS, emits=("Xor",)),
                                              Sample(torch.bitwise_xor, _INTS, emits=("BitwiseXor",), name="int")])
@exporter("aten.bitwise_xor.Scalar", samples=[Sample(lambda a: torch.bitwise_xor(a, 5), _INTS[:1], emits=("BitwiseXor",))])
@exporter("aten.__xor__.Tensor", samples=[Sample(lambda a, b: a ^ b, _BOOLS, emits=("Xor",))])
@exporter("aten.__xor__.Scalar", samples=[Sample(lambda a: a ^ 5, _INTS[:1], emits=("BitwiseXor",))])
def bitwise_xor(g, a, b):
    return _bitwise(g, "Xor", "BitwiseXor", a, b)


@exporter("aten.bitwise_not.default", "aten.logical_not.default",
          samples=[Sample(lambda a: ~a, _BOOLS[:1], emits=("Not",), name="invert"),
                   Sample(torch.logical_not, _BOOLS[:1], emits=("Not",), name="logical"),
                   Sample(lambda a: ~a, _INTS[:1], emits=("BitwiseNot",), name="int")])
def bitwise_not(g, a):
    if a.dtype != ir.DataType.BOOL and g.fx.target.__name__.startswith("bitwise"):
        if g.opset < 18:
            raise g.error("BitwiseNot on integers needs opset 18")
        return g.op("BitwiseNot", a)
    return g.op("Not", g.cast(a, ir.DataType.BOOL))
