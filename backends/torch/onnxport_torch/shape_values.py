"""Shape programs on Python numbers: the integer values a shape program computes, kept as ints.

A shape program (``runtime.ShapeProgram``) computes small integer vectors from the shapes of
runtime tensors (``Shape -> Gather -> Concat -> Reshape``). Evaluated as tensors, every consumer
reads them back (``.tolist()``): under ``torch.compile`` that is a data-dependent value the
compiler cannot reason about. :func:`run_step` evaluates the common shape ops on :class:`Ints`,
lists of Python ints (``SymInt`` while tracing), so the sizes stay symbolic; an op or a value it
does not cover returns ``NotImplemented`` and the step runs its tensor primitive instead.
Tensors a program builds (``ConstantOfShape``, ``Range``) are made on the device of its roots.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

_INT_TYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
_MAX_ELEMENTS = 64  # a larger int vector is no shape: it stays a tensor

#: (op, input index) of runtime consumers that read that input as a list of ints (``context.ints``)
LIST_INPUTS = frozenset({
    ("Reshape", 1), ("Expand", 1), ("Tile", 1), ("Unsqueeze", 1), ("Squeeze", 1), ("Slice", 1), ("Slice", 2),
    ("Slice", 3), ("Slice", 4), ("ConstantOfShape", 0), ("Split", 1), ("Pad", 1), ("CenterCropPad", 1),
    ("CumSum", 1), ("CumProd", 1), ("TopK", 1), ("Trilu", 1), ("Range", 0), ("Range", 1), ("Range", 2),
    ("OneHot", 1), ("Col2Im", 1), ("Col2Im", 2),
    *((f"Reduce{r}", 1) for r in ("Sum", "Mean", "Max", "Min", "Prod", "L1", "L2", "LogSum", "LogSumExp",
                                  "SumSquare")),
})


class Ints:
    """An integer (or bool) scalar or vector of a shape program, as Python values."""

    __slots__ = ("values", "scalar", "dtype")

    def __init__(self, values: list[Any], scalar: bool, dtype: torch.dtype):
        self.values = values
        self.scalar = scalar
        self.dtype = dtype

    def tensor(self, device: torch.device | None) -> torch.Tensor:
        """The value as a tensor on ``device``."""
        data = self.values[0] if self.scalar else self.values
        return torch.tensor(data, dtype=self.dtype, device=device)

    def __repr__(self) -> str:
        return f"Ints({self.values}, scalar={self.scalar}, {self.dtype})"


def from_static(t: torch.Tensor) -> Ints | None:
    """An import-time integer tensor as :class:`Ints` (None: not a small int scalar/vector)."""
    if t.dtype not in _INT_TYPES and t.dtype != torch.bool:
        return None
    if t.dim() > 1 or t.numel() > _MAX_ELEMENTS:
        return None
    return Ints([bool(v) if t.dtype == torch.bool else int(v) for v in t.reshape(-1).tolist()], t.dim() == 0, t.dtype)


def as_argument(v: Any, read_as_ints: bool, device: torch.device | None, ctx: Any) -> Any:
    """A step argument as its primitive takes it: :class:`Ints` become a list where the primitive
    reads that input as ints (``context.ints``), else a tensor on ``device``; import-time tensors
    move to ``device`` and float ones follow the module's dtype (``ctx.compute_dtype``)."""
    if type(v) is Ints:
        return list(v.values) if read_as_ints else v.tensor(device)
    if isinstance(v, torch.Tensor) and not read_as_ints:
        dtype = ctx.compute_dtype(v.dtype) if v.is_floating_point() else v.dtype
        if (device is not None and v.device != device) or dtype != v.dtype:
            return v.to(device=device, dtype=dtype)
    return v


def _plain(values: list[Any]) -> bool:
    return all(type(x) is int for x in values)


def _elementwise(f: Callable[[Any, Any], Any], a: Ints, b: Ints, dtype: torch.dtype) -> Ints | Any:
    if a.scalar and b.scalar:
        return Ints([f(a.values[0], b.values[0])], True, dtype)
    x = a.values * len(b.values) if a.scalar else a.values
    y = b.values * len(a.values) if b.scalar else b.values
    if len(x) != len(y) and len(x) != 1 and len(y) != 1:
        return NotImplemented
    if len(x) == 1:
        x = x * len(y)
    if len(y) == 1:
        y = y * len(x)
    return Ints([f(p, q) for p, q in zip(x, y)], False, dtype)


def _div(p: Any, q: Any) -> Any:
    """ONNX integer Div (truncates toward zero); sizes are never negative when symbolic."""
    if type(p) is int and type(q) is int:
        if q == 0:
            raise ZeroDivisionError("integer division by zero")
        r = abs(p) // abs(q)
        return r if (p >= 0) == (q >= 0) else -r
    return p // q


def _max(p: Any, q: Any) -> Any:
    return max(p, q) if type(p) is int and type(q) is int else torch.sym_max(p, q)


def _min(p: Any, q: Any) -> Any:
    return min(p, q) if type(p) is int and type(q) is int else torch.sym_min(p, q)


_BINARY = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": _div, "Max": _max, "Min": _min}


def constant_fill(attrs: dict[str, Any]) -> Any:
    """``ConstantOfShape``'s fill value as a Python number (None: not one element), read at import."""
    import numpy as np

    value = attrs.get("value")
    if value is None:
        return 0
    arr = np.asarray(value).reshape(-1)
    return arr[0].item() if arr.size == 1 else None


def run_step(op: str, ctx: Any, attrs: dict[str, Any], args: list[Any], device: torch.device | None,
             fill: Any = None) -> Any:
    """One shape-program node on :class:`Ints` (``NotImplemented``: run its tensor primitive);
    ``fill``: a ``ConstantOfShape``'s :func:`constant_fill`."""
    if op == "Shape":
        x = args[0]
        if not isinstance(x, torch.Tensor):
            return NotImplemented
        start, end = attrs.get("start", 0) or 0, attrs.get("end")
        return Ints(list(x.shape)[start:end], False, torch.int64)
    if op == "Size":
        return Ints([args[0].numel()], True, torch.int64) if isinstance(args[0], torch.Tensor) else NotImplemented
    if any(a is not None and type(a) is not Ints for a in args):
        return NotImplemented
    if op in _BINARY:
        if len(args) != 2 or args[0].dtype not in _INT_TYPES or args[0].dtype != args[1].dtype:
            return NotImplemented
        return _elementwise(_BINARY[op], args[0], args[1], args[0].dtype)
    if op == "Equal":
        if len(args) != 2 or args[0].dtype != args[1].dtype:
            return NotImplemented
        return _elementwise(operator.eq, args[0], args[1], torch.bool)
    if op == "Identity":
        return args[0]
    if op == "Cast":
        to = ctx.output_torch_dtype(0)
        x = args[0]
        if to not in (torch.int64, torch.int32) or x.dtype not in _INT_TYPES:
            return NotImplemented
        return Ints(x.values, x.scalar, to)
    if op == "Gather":
        return _gather(attrs, *args)
    if op == "Concat":
        if any(a.scalar for a in args) or attrs.get("axis") not in (0, -1):
            return NotImplemented
        return Ints([v for a in args for v in a.values], False, args[0].dtype)
    if op == "Unsqueeze":
        x, axes = args
        if not x.scalar or axes is None or axes.values not in ([0], [-1]):
            return NotImplemented
        return Ints(list(x.values), False, x.dtype)
    if op == "Squeeze":
        x = args[0]
        axes = args[1] if len(args) > 1 else None
        if x.scalar or len(x.values) != 1 or (axes is not None and axes.values not in ([0], [-1])):
            return NotImplemented
        return Ints(list(x.values), True, x.dtype)
    if op == "Slice":
        return _slice(*args)
    if op == "Reshape":  # between a scalar and a vector (a shape as one-element vector, and back)
        x, shape = args
        n = 1 if x.scalar else len(x.values)
        if shape.values == [] and n == 1:
            return Ints(list(x.values), True, x.dtype)
        if len(shape.values) == 1 and shape.values[0] in (-1, n):
            return Ints(list(x.values), False, x.dtype)
        return NotImplemented
    if op == "Where":
        cond, a, b = args
        if cond.dtype != torch.bool or a.dtype != b.dtype:
            return NotImplemented
        n = max(len(cond.values), len(a.values), len(b.values))
        if any(len(t.values) not in (1, n) for t in (cond, a, b)):
            return NotImplemented
        pick = [(a.values[i if len(a.values) > 1 else 0] if cond.values[i if len(cond.values) > 1 else 0]
                 else b.values[i if len(b.values) > 1 else 0]) for i in range(n)]
        return Ints(pick, cond.scalar and a.scalar and b.scalar, a.dtype)
    if op == "ConstantOfShape":
        return _constant_of_shape(ctx, fill, args[0], device)
    if op == "Range":
        start, limit, delta = args
        if not (start.scalar and limit.scalar and delta.scalar) or start.dtype not in _INT_TYPES:
            return NotImplemented
        return torch.arange(start.values[0], limit.values[0], delta.values[0], dtype=start.dtype, device=device)
    return NotImplemented


def _gather(attrs: dict[str, Any], data: Ints, idx: Ints) -> Ints | Any:
    if data.scalar or attrs.get("axis", 0) not in (0, -1) or not _plain(idx.values):
        return NotImplemented
    n = len(data.values)
    if any(not -n <= i < n for i in idx.values):
        return NotImplemented  # the primitive names the bad index
    picked = [data.values[i] for i in idx.values]
    return Ints(picked, idx.scalar, data.dtype)


def _slice(data: Ints, starts: Ints, ends: Ints, axes: Ints | None = None, steps: Ints | None = None) -> Ints | Any:
    if data.scalar or len(starts.values) != 1 or len(ends.values) != 1:
        return NotImplemented
    if axes is not None and axes.values not in ([0], [-1]):
        return NotImplemented
    step = steps.values[0] if steps is not None else 1
    s, e = starts.values[0], ends.values[0]
    if not _plain([s, e, step]) or step == 0:
        return NotImplemented
    return Ints(data.values[s:e:step], False, data.dtype)  # Python's clamping is ONNX's


def _constant_of_shape(ctx: Any, fill: Any, shape: Ints, device: torch.device | None) -> Any:
    dtype = ctx.output_torch_dtype(0)
    if shape.scalar or fill is None or dtype not in _INT_TYPES + (torch.bool, torch.float64, torch.float32,
                                                                torch.float16, torch.bfloat16):
        return NotImplemented
    if dtype in _INT_TYPES and len(shape.values) <= 1 and _plain(shape.values) and sum(shape.values) <= _MAX_ELEMENTS:
        return Ints([int(fill)] * (shape.values[0] if shape.values else 1), not shape.values, dtype)
    return torch.full(shape.values, fill, dtype=ctx.compute_dtype(dtype), device=device)


__all__ = ["LIST_INPUTS", "Ints", "as_argument", "constant_fill", "from_static", "run_step"]
