"""Sizes known before computing: constant folding asks here before it allocates anything."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import ConversionError

#: folded results larger than this many elements stay runtime computations
FOLD_ELEMENTS = 1 << 26
#: ops whose output shape is the broadcast of their inputs' (``[n] * [n, 1]`` has n**2 elements)
BROADCAST_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum", "Where", "PRelu", "BitShift",
    "And", "Or", "Xor", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor",
})
#: ops whose output size a setting input gives (a depth, a window length, a target shape)
SIZED_OPS = frozenset({"OneHot", "HannWindow", "HammingWindow", "BlackmanWindow", "CenterCropPad"})
#: ops whose output may be far larger than their inputs: sized before they run
GROWING_OPS = frozenset({"ConstantOfShape", "Tile", "Expand", "Pad", "Range", "Resize", "Upsample"}) | BROADCAST_OPS \
    | SIZED_OPS
#: ops whose ``shape`` attribute gives their output shape: sized when the model is prepared
SHAPE_ATTRIBUTE_OPS = frozenset({"RandomNormal", "RandomUniform"})


def budget_elements() -> int:
    """The most elements one computed tensor may have: ``ONNXPORT_MAX_ELEMENTS``, else memory / 4."""
    env = os.environ.get("ONNXPORT_MAX_ELEMENTS")
    if env:
        return int(env)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 1 << 32


def check_budget(elements: int, label: str) -> None:
    """Raise :class:`ConversionError` when a result of ``elements`` would not fit in memory."""
    limit = budget_elements()
    if elements > limit:
        raise ConversionError(
            f"node {label} would create a tensor of {elements} elements, more than the "
            f"{limit} that fit in memory (ONNXPORT_MAX_ELEMENTS)"
        )


def _ints(a: Any) -> list[int] | None:
    if a is None:
        return None
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu" or arr.size > 64:
        return None
    return [int(x) for x in arr.reshape(-1)]


def _broadcast(a: Sequence[int], b: Sequence[int]) -> list[int]:
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    return [max(x, y) for x, y in zip(a, b)]


def folded_elements(op_type: str, shapes: list[tuple[int, ...] | None], value: Callable[[int], Any]) -> int | None:
    """Elements the output of a size-growing op would have, or ``None`` when it does not grow sizes.

    :param shapes: the shape of each input (``None`` for a missing optional input).
    :param value: returns input ``i`` as an array (only called for small setting inputs).
    """
    if op_type in BROADCAST_OPS:
        known = [s for s in shapes if s is not None]
        if len(known) < 2 or all(s == known[0] for s in known[1:]):
            return None  # no input broadcast against another: no larger than the largest input
        out: list[int] = []
        for s in known:
            out = _broadcast(out, s)
        return math.prod(out)
    if op_type == "OneHot" and shapes and shapes[0] is not None:
        depth = _ints(value(1))
        return math.prod(shapes[0]) * abs(depth[0]) if depth and len(depth) == 1 else None
    if op_type in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        size = _ints(value(0))
        return abs(size[0]) if size and len(size) == 1 else None
    if op_type == "CenterCropPad" and shapes and shapes[0] is not None:
        target = _ints(value(1))
        if target is None:
            return None
        if len(target) == len(shapes[0]):
            return math.prod(abs(t) for t in target)
        top = max((abs(t) for t in target), default=1)  # the axes are an attribute: bounded per dim
        return math.prod(max(d, top) for d in shapes[0])
    if op_type == "ConstantOfShape":
        dims = _ints(value(0))
        return math.prod(abs(d) for d in dims) if dims is not None else None
    if op_type == "Tile" and shapes and shapes[0] is not None:
        reps = _ints(value(1))
        return math.prod(shapes[0]) * math.prod(abs(r) for r in reps) if reps is not None else None
    if op_type == "Expand" and shapes and shapes[0] is not None:
        dims = _ints(value(1))
        return math.prod(_broadcast(shapes[0], [abs(d) for d in dims])) if dims is not None else None
    if op_type == "Pad" and shapes and shapes[0] is not None and len(shapes) > 1:
        pads = _ints(value(1))
        if pads is None:
            return None
        grow = sum(abs(p) for p in pads)
        return math.prod(d + grow for d in shapes[0])
    if op_type == "Range":
        vals = [np.asarray(value(i)).reshape(-1) for i in range(3)]
        if any(v.size != 1 for v in vals):
            return None
        start, limit, delta = (float(v[0]) for v in vals)
        if delta == 0 or not all(map(math.isfinite, (start, limit, delta))):
            return None
        return max(int(math.ceil((limit - start) / delta)), 0)
    if op_type in ("Resize", "Upsample") and shapes and shapes[0] is not None:
        for i in (3, 2, 1):  # sizes, then scales
            if i < len(shapes) and shapes[i] is not None and math.prod(shapes[i]) > 0:
                arr = np.asarray(value(i)).reshape(-1)
                if arr.size > 64:
                    return None
                if arr.dtype.kind in "iu":
                    return math.prod(abs(int(x)) for x in arr)
                if arr.size == len(shapes[0]) and np.all(np.isfinite(arr)):
                    return math.prod(int(d * abs(float(s))) + 1 for d, s in zip(shapes[0], arr))
                return None
    return None


def sized_at_call(op_type: str, output_shape: Sequence[Any] | None) -> bool:
    """Whether a node must be sized when it runs (:func:`check_call`): a growing op, except a
    broadcasting one whose output shape is static (sized once, when the model is prepared:
    :func:`check_static_outputs`), which keeps elementwise ops free of a per-call cost."""
    if op_type not in GROWING_OPS:
        return False
    if op_type in BROADCAST_OPS and output_shape is not None and all(isinstance(d, int) for d in output_shape):
        return False
    return True


def check_broadcast(shapes: Sequence[Sequence[int]], label: str) -> None:
    """Refuse a broadcast of ``shapes`` (concrete) larger than both the largest input and the
    budget; cheap where nothing grows (the per-call check of elementwise ops)."""
    big = max(shapes, key=len)
    n = len(big)
    for s in shapes:  # the common case: every input broadcasts into the longest one, no growth
        off = n - len(s)
        for i, d in enumerate(s):
            if d != 1 and d != big[off + i]:
                break
        else:
            continue
        break
    else:
        return
    out: list[int] = []
    for s in shapes:
        out = _broadcast(out, s)
    n = math.prod(out)
    if n > max(math.prod(s) for s in shapes):
        check_budget(n, label)


def check_static_outputs(nodes: Iterable[Any], label: Callable[[Any], str]) -> None:
    """Refuse, when a model is prepared, a broadcasting node whose static output shape (from
    shape inference) has more elements than the memory budget."""
    for node in nodes:
        if node.op_type not in BROADCAST_OPS or not node.outputs or node.outputs[0] is None:
            continue
        shape = node.outputs[0].shape
        if shape is not None and all(isinstance(d, int) for d in shape.dims):
            check_budget(math.prod(shape.dims), label(node))


def check_shape_attributes(nodes: Iterable[Any], label: Callable[[Any], str]) -> None:
    """Refuse, when a model is prepared, a node whose ``shape`` attribute (``RandomNormal``,
    ``RandomUniform``) asks for more elements than the memory budget."""
    for node in nodes:
        if node.op_type not in SHAPE_ATTRIBUTE_OPS or not node.attributes:
            continue
        attr = node.attributes.get("shape")
        if attr is None:
            continue
        try:
            dims = [abs(int(d)) for d in attr.value]
        except (TypeError, ValueError):
            continue
        check_budget(math.prod(dims), label(node))


def check_call(op_type: str, label: str, args: Sequence[Any], shape_of: Callable[[Any], Any],
               value_of: Callable[[Any], Any], const: Callable[[int], Any] | None = None) -> None:
    """Refuse, before a size-growing op runs, a result larger than the memory budget.

    Does nothing for other ops, or where the sizes are not concrete (symbolic shapes, traced
    values). ``shape_of``/``value_of`` read a framework value's shape and numpy value; ``const``
    (the node context's :meth:`~onnxport.importing.context.NodeContext.const`) gives the import-time value of
    an input where there is one (what a primitive reads instead of a traced value).
    """
    if op_type not in GROWING_OPS:
        return

    def value(i: int) -> Any:
        known = const(i) if const is not None else None
        return known if known is not None else value_of(args[i])

    try:
        size = folded_elements(op_type, [None if a is None else tuple(shape_of(a)) for a in args], value)
    except (IndexError, TypeError, ValueError, OverflowError, AttributeError, RuntimeError, NotImplementedError):
        return  # traced or symbolic values: nothing concrete to size
    if size is not None:
        check_budget(size, label)


def fold_fits(op_type: str, args: Sequence[Any], shape_of: Callable[[Any], Any], value_of: Callable[[Any], Any],
              limit: int = FOLD_ELEMENTS) -> bool:
    """Whether folding ``op_type`` on these constant inputs creates at most ``limit`` elements.

    Sized before computing: a size-growing op whose result would be larger stays a run-time
    computation (sized again, against the memory budget, when it runs). Other ops always fit.
    """
    if op_type not in GROWING_OPS:
        return True
    try:
        size = folded_elements(op_type, [None if a is None else tuple(shape_of(a)) for a in args],
                               lambda i: value_of(args[i]))
    except (IndexError, KeyError, TypeError, ValueError, OverflowError):
        return True
    return size is None or size <= limit

