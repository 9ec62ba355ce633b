"""The builder torch export primitives receive (:class:`TorchGraph`) and FX naming helpers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

import onnx_ir as ir
import torch
import torch.fx

from onnxport.errors import ConversionError
from onnxport.exporting.builder import Builder

from . import dtypes


class GraphRunner(Protocol):
    """What converts an FX subgraph into a builder (``export_walk.Converter``)."""

    def run_graph(self, g: TorchGraph, gm: torch.fx.GraphModule, operands: list[Any]) -> None: ...


def target_name(target: Any) -> str:
    """The registry key of an FX call target: ``aten.convolution.default``, ``operator.mul``."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", repr(target))
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    if mod == "math":
        return f"math.{name}"
    if name.startswith("sym_"):
        return f"torch.{name}"
    return f"{mod}.{name}"


def storage_key(t: torch.Tensor) -> tuple[Any, ...]:
    """Identity of a tensor's data: tied parameters share it."""
    return (
        t.untyped_storage().data_ptr(),
        t.storage_offset(),
        tuple(t.shape),
        tuple(t.stride()),
        t.dtype,
    )


def module_path(path: str) -> str:
    """``L['self'].layer1`` (older torch) or ``layer1`` -> ``layer1``."""
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"getattr\(([^,]+), '([^']+)'\)", r"\1.\2", path)
    return path


def class_name(cls: Any) -> str:
    """The qualified name of a module class as ``nn_module_stack`` records it."""
    return cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}"


def module_stack(node: torch.fx.Node) -> list[tuple[str, str]]:
    """``[(path, class name), ...]`` from the root module down to the one that ran ``node``."""
    stack = node.meta.get("nn_module_stack") or {}
    out = []
    for key, (path, cls) in stack.items():
        if key.startswith("_empty_nn_module_stack"):
            continue
        out.append((module_path(path), class_name(cls)))
    return out


def resolve(a: Any, env: dict) -> Any:
    """An FX argument with its nodes replaced by their converted values (lists, tuples, dicts too)."""
    if isinstance(a, torch.fx.Node):
        return env[a]
    if isinstance(a, (list, tuple)):
        return type(a)(resolve(x, env) for x in a)
    if isinstance(a, dict):
        return {k: resolve(v, env) for k, v in a.items()}
    return a


class TorchGraph(Builder):
    """The ``g`` a torch export primitive receives: the core builder (values, nodes, shape
    helpers ``rank``/``axis``/``dim_size``/``scalar``) plus what the traced FX node says."""

    def __init__(self, opset: int, *, name: str = "main_graph", parent: TorchGraph | None = None,
                 converter: GraphRunner | None = None):
        super().__init__(opset, name=name, parent=parent)
        self.converter = converter if converter is not None else (parent.converter if parent else None)
        #: the FX node being converted
        self.fx: torch.fx.Node | None = None

    # -- what the traced node says -------------------------------------------------------------
    def meta(self, i: int | None = None) -> Any:
        """The traced (fake) result of the current node, or its ``i``-th element."""
        val = self.fx.meta.get("val") if self.fx is not None else None
        return val if i is None else val[i]

    def out_dtype(self, i: int | None = None) -> ir.DataType:
        """The ONNX element type of the current node's result (or its ``i``-th element)."""
        val = self.meta(i)
        if isinstance(val, torch.Tensor):
            return dtypes.to_onnx_dtype(val.dtype)
        if isinstance(val, (torch.SymBool, bool)):
            return ir.DataType.BOOL
        if isinstance(val, (torch.SymFloat, float)):
            return ir.DataType.FLOAT
        return ir.DataType.INT64

    def out_rank(self, i: int | None = None) -> int:
        return self.meta(i).dim()

    @property
    def path(self) -> str:
        """The module path of the current node (``layer1.0.conv1``), '' at the root."""
        stack = module_stack(self.fx) if self.fx is not None else []
        return stack[-1][0] if stack else ""

    def error(self, message: str) -> ConversionError:
        """An error naming the current op and module path."""
        target = target_name(self.fx.target) if self.fx is not None else "?"
        where = self.path or "<root module>"
        return ConversionError(f"exporting {target} (node {self.fx.name if self.fx else '?'}) in module {where!r}: {message}")

    # -- value helpers ------------------------------------------------------------------------------
    @staticmethod
    def onnx_dtype(dtype: torch.dtype) -> ir.DataType:
        return dtypes.to_onnx_dtype(dtype)

    def tensor(self, x: Any, dtype: ir.DataType | None = None) -> ir.Value:
        """A tensor value from a value or a Python number, cast to ``dtype`` when given."""
        if isinstance(x, ir.Value):
            return self.cast(x, dtype) if dtype is not None else x
        return self.scalar(x, dtype if dtype is not None else self.out_dtype())

    def subgraph_from(self, gm: torch.fx.GraphModule, operands: Sequence[Any], name: str) -> ir.Graph:
        """Convert an FX subgraph (a ``torch.cond`` branch) whose inputs are outer values."""
        sub = TorchGraph(self.opset, name=self.unique_name(name), parent=self)
        saved = self.fx
        self.converter.run_graph(sub, gm, list(operands))
        self.fx = saved
        return sub.graph()
