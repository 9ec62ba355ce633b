"""What an imported module runs: the callables its fx nodes call.

:class:`NodeFn` (one primitive with its context and attributes bound), :class:`ShapeProgram` (a
static shape computation replayed per input-shape key), :class:`Subgraph` (an If branch or a
Loop/Scan body) and :func:`linear` (a fused ``MatMul + Add``).
"""

from __future__ import annotations

import copy
import functools
import keyword
import re
from typing import Any

import numpy as np
import torch
import torch.fx as fx
from torch import nn

from onnxport.errors import ConversionError, OnnxportError
from onnxport.ir.safety import BROADCAST_OPS, check_broadcast, check_call, sized_at_call

from . import shape_values
from .context import NodeContext

_MODULE_ATTRS = set(dir(nn.Module)) | set(vars(nn.Module())) | {"graph", "code", "meta", "forward", "self"}
_UNSAFE = re.compile(r"[^0-9a-zA-Z_]")


def name_part(name: str) -> str:
    """A safe name part for a name from the file: only [0-9a-zA-Z_], never a keyword or a Module attribute."""
    s = _UNSAFE.sub("_", name) or "_"
    if s in _MODULE_ATTRS or keyword.iskeyword(s) or keyword.issoftkeyword(s) or s.startswith("_onnx"):
        s += "_"
    return s


def _sizable(a: Any) -> Any:
    """An input as the size check reads it: a tensor, a shape given as Python ints (an array), or None."""
    if isinstance(a, torch.Tensor):
        return a
    if type(a) is shape_values.Ints:
        a = a.values[0] if a.scalar else a.values
    if isinstance(a, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in a):
        return np.asarray(a, np.int64)
    if isinstance(a, int) and not isinstance(a, bool):
        return np.asarray(a, np.int64)
    return None


class NodeFn:
    """The callable an fx node runs: one primitive with its context and attributes bound."""

    def __init__(self, fn, ctx: NodeContext, attrs: dict[str, Any], subgraphs=()):
        self.fn = fn
        self.ctx = ctx
        self.attrs = attrs
        self.subgraphs = list(subgraphs)  # (attr name, [Subgraph ...], is_list)
        #: whether each call is sized before it allocates (onnxport.ir.safety.sized_at_call)
        self.sized = sized_at_call(ctx.op_type, ctx.output_shapes[0] if ctx.output_shapes else None)
        self.broadcast = ctx.op_type in BROADCAST_OPS  # shapes only: no values to read
        base = name_part(f"{ctx.op_type}_{ctx.name}" if ctx.name else ctx.op_type).lower()
        self.__name__ = self.__qualname__ = base
        self.__module__ = "onnxport_torch.ops"

    def __call__(self, *args: Any) -> Any:
        if self.subgraphs:
            return self._call_with_subgraphs(args)
        if self.sized and not torch.compiler.is_compiling():  # a compiled graph has no per-call Python checks
            if self.broadcast:
                shapes = [a.shape for a in args if isinstance(a, torch.Tensor)]
                if len(shapes) > 1:
                    check_broadcast(shapes, self.ctx.label)
            else:
                self._check_size(args)
        try:
            return self._bound(*args)
        except OnnxportError:
            raise
        except Exception as exc:
            raise self._failure(exc) from exc

    @property
    def attrs(self) -> dict[str, Any]:
        return self._attrs

    @attrs.setter
    def attrs(self, attrs: dict[str, Any]) -> None:
        # bound once (C-level partial): no per-call dict expansion in Python
        self._attrs = attrs
        self._bound = functools.partial(self.fn, self.ctx, **attrs)

    def _check_size(self, args: tuple) -> None:
        """Refuse, before allocating, a result larger than the memory budget."""
        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return  # symbolic values: no sizes to read
        # fake or subclassed tensors (torch.export) have no values to read: no check; shapes computed
        # as Python ints (onnxport_torch.shape_values) are sized like the tensors they stand for
        check_call(self.ctx.op_type, self.ctx.label, [_sizable(a) for a in args], lambda a: a.shape,
                   lambda a: a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else a, self.ctx.const)

    def _failure(self, exc: Exception) -> ConversionError:
        return ConversionError(
            f"node {self.ctx.label} (opset {self.ctx.opset}) failed: {type(exc).__name__}: {exc}"
        )

    def _call_with_subgraphs(self, args: tuple) -> Any:
        attrs = dict(self._attrs)
        n = self.ctx.num_inputs
        inputs, caps = args[:n], args[n:]
        pos = 0
        for name, subs, is_list in self.subgraphs:
            bound = []
            for sub in subs:
                bound.append(sub.bind(caps[pos : pos + sub.num_captures]))
                pos += sub.num_captures
            attrs[name] = bound if is_list else bound[0]
        try:
            return self.fn(self.ctx, *inputs, **attrs)
        except OnnxportError:
            raise
        except Exception as exc:
            raise self._failure(exc) from exc

    def __repr__(self) -> str:
        return f"NodeFn({self.ctx.label})"


#: ops whose output depends only on the shape of their (runtime) input: roots of shape programs
SHAPE_ROOTS = {"Shape", "Size"}
_PROGRAM_CACHE = 16  # distinct input-shape keys remembered per shape program


class ShapeStep:
    """One ONNX node of a shape program: its bound primitive and where its inputs come from."""

    __slots__ = ("fn", "sources", "num_outputs", "static_ints", "fill")

    def __init__(self, fn: NodeFn, sources: list[tuple[str, Any] | None], num_outputs: int):
        self.fn = fn
        self.sources = sources  # ("static", tensor) | ("root", index) | ("value", (step, output)) | None
        self.num_outputs = num_outputs
        # import-time integer inputs as Python ints (shape_values.Ints), None where not
        self.static_ints = [shape_values.from_static(src[1]) if src is not None and src[0] == "static" else None
                            for src in sources]
        self.fill = shape_values.constant_fill(fn.attrs) if fn.ctx.op_type == "ConstantOfShape" else None


class ShapeProgram:
    """A static subgraph whose values depend only on the shapes of some runtime tensors.

    Shape/Size of a runtime tensor and the deterministic nodes computing on them and on constants
    (shape arithmetic, masks built from ``Range``...) are a pure function of the roots' shapes:
    the program evaluates them once per distinct tuple of root shapes (and device) and replays
    the result, so the forward pass runs one cache lookup instead of a chain of small tensor ops.
    Integer values are computed as Python ints (:mod:`~onnxport_torch.shape_values`): under
    tracing or compilation (torch.compile, torch.export, jit/fx tracing), where the program always
    evaluates, sizes stay symbolic. With ``as_list`` the result goes to consumers that read it as
    a list of ints (``Reshape``'s shape...); otherwise it is a tensor on the roots' device.
    """

    def __init__(self, steps: list[ShapeStep], output: tuple[int, int], num_roots: int, name: str,
                 copy_out: bool, as_list: bool = False):
        self.steps = steps
        self.output = output
        self.num_roots = num_roots
        self.copy_out = copy_out  # a graph output: the caller owns (and may modify) the tensor
        self.as_list = as_list
        self.cache: dict[tuple, Any] = {}
        self.__name__ = self.__qualname__ = name
        self.__module__ = "onnxport_torch.ops"

    def ints_twin(self) -> ShapeProgram:
        """The same program giving its value as a list of ints."""
        return ShapeProgram(self.steps, self.output, self.num_roots, self.__name__ + "_ints", False, True)

    def evaluate(self, roots: tuple) -> Any:
        device = next((r.device for r in roots if isinstance(r, torch.Tensor)), None)
        results: list[Any] = []
        for step in self.steps:
            args = []
            for src, sym in zip(step.sources, step.static_ints):
                if src is None:
                    args.append(None)
                elif src[0] == "static":
                    args.append(sym if sym is not None else src[1])
                elif src[0] == "root":
                    args.append(roots[src[1]])
                else:
                    j, k = src[1]
                    args.append(results[j] if self.steps[j].num_outputs == 1 else results[j][k])
            out: Any = NotImplemented
            ctx = step.fn.ctx
            if step.fn.sized and not torch.compiler.is_compiling():  # ConstantOfShape, Range ...: sized first
                step.fn._check_size(tuple(args))
            if step.num_outputs == 1 and ctx.domain in ("", "ai.onnx") and not step.fn.subgraphs:
                try:
                    out = shape_values.run_step(ctx.op_type, ctx, step.fn.attrs, args, device, step.fill)
                except (ZeroDivisionError, IndexError, TypeError, ValueError):
                    out = NotImplemented  # the primitive reports it, naming the node
            if out is NotImplemented:
                op = ctx.op_type
                out = step.fn(*[shape_values.as_argument(a, (op, i) in shape_values.LIST_INPUTS, device, ctx)
                                for i, a in enumerate(args)])
            results.append(out)
        j, k = self.output
        out = results[j] if self.steps[j].num_outputs == 1 else results[j][k]
        if type(out) is shape_values.Ints:
            return list(out.values) if self.as_list else out.tensor(device)
        if isinstance(out, torch.Tensor) and device is not None and out.device != device:
            return out.to(device)
        return out

    def __call__(self, *roots: Any) -> Any:
        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return self.evaluate(roots)
        try:
            key = (*(r.shape for r in roots), *(r.device for r in roots), self.steps[0].fn.ctx._mode.float_dtype)
            out = self.cache.get(key)
        except (TypeError, AttributeError):  # symbolic sizes (tracing) or a root that is not a tensor
            return self.evaluate(roots)
        if out is None:
            out = self.evaluate(roots)
            if len(self.cache) >= _PROGRAM_CACHE:
                del self.cache[next(iter(self.cache))]
            self.cache[key] = out
        if type(out) is list:
            return list(out)
        if self.copy_out and isinstance(out, torch.Tensor):
            return out.clone()
        return out

    def __repr__(self) -> str:
        return f"ShapeProgram({self.__name__}, {len(self.steps)} nodes, {self.num_roots} roots)"


def with_mode(target: Any, mode: Any, done: dict[int, Any]) -> Any:
    """``target`` (a node's callable) for a copy of the module whose train flag and float dtype are
    ``mode``: NodeFns and shape programs are copied with their contexts reading ``mode``."""
    copied = done.get(id(target))
    if copied is not None:
        return copied
    if type(target) is NodeFn:
        copied = copy.copy(target)
        copied.ctx = copy.copy(target.ctx)
        copied.ctx._mode = mode
        copied.attrs = target.attrs  # binds the copy's context
    elif type(target) is ShapeProgram:
        copied = copy.copy(target)
        copied.cache = {}
        steps = []
        for step in target.steps:
            new = object.__new__(ShapeStep)
            for slot in ShapeStep.__slots__:
                setattr(new, slot, getattr(step, slot))
            new.fn = with_mode(step.fn, mode, done)
            steps.append(new)
        copied.steps = steps
    else:
        return target
    done[id(target)] = copied
    return copied


class Subgraph:
    """A compiled ONNX subgraph (If branch, Loop/Scan body): call it with its formal inputs."""

    def __init__(self, module: fx.GraphModule, num_inputs: int, num_captures: int, name: str):
        self.module = module
        self.num_inputs = num_inputs
        self.num_captures = num_captures
        self.name = name

    def bind(self, captures) -> _BoundSubgraph:
        return _BoundSubgraph(self, tuple(captures))


class _BoundSubgraph:
    __slots__ = ("sub", "captures")

    def __init__(self, sub: Subgraph, captures: tuple):
        self.sub = sub
        self.captures = captures

    @property
    def num_inputs(self) -> int:
        return self.sub.num_inputs

    def __call__(self, *inputs: Any) -> list[Any]:
        if len(inputs) != self.sub.num_inputs:
            raise ConversionError(
                f"subgraph {self.sub.name!r} takes {self.sub.num_inputs} inputs, got {len(inputs)}"
            )
        return list(self.sub.module(*inputs, *self.captures))



def _linear(ctx: NodeContext, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``MatMul(x, W) + b`` with an [in, out] weight and a bias of its columns, as one GEMM."""
    if x.dim() == 0:
        raise ctx.error("MatMul needs inputs of rank >= 1, got a scalar")
    return torch.nn.functional.linear(x, w.t(), b)



__all__ = ["NodeFn", "ShapeProgram", "Subgraph", "name_part"]
