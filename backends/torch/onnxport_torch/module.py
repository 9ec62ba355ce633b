"""The imported model: :class:`OnnxModule`, an ``fx.GraphModule`` with the ONNX graph's call contract."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import torch
import torch.fx as fx
from torch import nn

from onnxport.errors import ConversionError, InputError, OnnxportError
from onnxport.importing.inputs import CallCheck, InputSpec, bind_inputs

from . import dtypes
from .context import Mode
from .runtime import with_mode


class OnnxModule(fx.GraphModule):
    """An imported ONNX model: a ``torch.fx.GraphModule`` whose weights are the initializers.

    Call it with the graph's inputs positionally (graph order) or by ONNX name; one output comes
    back as a tensor, several as a tuple in graph order.
    """

    def __init__(self, root: nn.Module, graph: fx.Graph, info: dict[str, Any], mode: Mode):
        super().__init__(root, graph, class_name="OnnxModule")
        self._onnx_info = info
        self._onnx_mode = mode

    @classmethod
    def placed(cls, graph: fx.Graph, info: dict[str, Any], mode: Mode,
               place: Callable[[OnnxModule], None]) -> OnnxModule:
        """A module that runs ``graph``, whose layers and weights ``place`` registers in it first
        (instead of fx copying them from a root module, to be moved again): the code is compiled
        once, for the final paths."""
        empty = fx.Graph()
        empty.output(None)
        module = cls(nn.Module(), empty, info, mode)
        place(module)
        module.graph = graph
        return module

    def _deepcopy_init(self):
        def init(res: OnnxModule, fake_mod: nn.Module, graph: fx.Graph) -> None:
            state = fake_mod.__dict__
            done: dict[int, Any] = {}  # the copy's node functions read its own mode (train flag, dtype)
            for n in graph.nodes:
                if n.op == "call_function":
                    n.target = with_mode(n.target, state["_onnx_mode"], done)
            OnnxModule.__init__(res, fake_mod, graph, state["_onnx_info"], state["_onnx_mode"])
            res.train(state.get("training", False))

        return init

    def __reduce__(self):
        raise ConversionError(
            "an imported OnnxModule holds compiled node functions and cannot be pickled whole; "
            "save model.state_dict() and re-import the ONNX file, or copy.deepcopy it in memory"
        )

    @property
    def onnx_input_names(self) -> list[str]:
        return [s.name for s in self._onnx_info["inputs"]]

    @property
    def onnx_output_names(self) -> list[str]:
        return list(self._onnx_info["outputs"])

    @property
    def initializer_keys(self) -> dict[str, str]:
        """ONNX initializer name -> ``state_dict`` key."""
        return dict(self._onnx_info["weights"])

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> OnnxModule:
        """Converting the weights (``.to``, ``.half()``, ``.double()``...) converts the float dtype the
        module computes in: the inputs it expects and the float tensors its graph makes."""
        out = super()._apply(fn, recurse)
        mode: Mode | None = self.__dict__.get("_onnx_mode")
        if mode is not None:
            probe = torch.empty(0, dtype=mode.float_dtype)
            try:
                converted = fn(probe)
            except Exception:  # noqa: BLE001 - a conversion that only applies to weights: dtype unchanged
                converted = probe
            if isinstance(converted, torch.Tensor) and converted.is_floating_point():
                mode.float_dtype = converted.dtype
        return out

    def train(self, mode: bool = True) -> OnnxModule:
        super().train(mode)
        self._onnx_mode.training = mode
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not torch.compiler.is_compiling() and not torch.jit.is_tracing():
            args = self._check_inputs(args, kwargs)
            try:
                return super().__call__(*args)
            except OnnxportError:
                raise
            except Exception as exc:
                raise _call_failure(self, args, exc) from exc
        elif kwargs:
            args = self._check_inputs(args, kwargs)
        return super().__call__(*args)

    def _check_inputs(self, args: tuple, kwargs: dict) -> tuple:
        specs: list[InputSpec] = self._onnx_info["inputs"]
        values = bind_inputs([s.name for s in specs], args, kwargs,
                             {arg: i for i, arg in enumerate(self._onnx_info["input_args"])})
        call = CallCheck()
        out = []
        for spec, v in zip(specs, values):
            name = spec.name
            if isinstance(v, np.ndarray):
                v = dtypes.from_numpy(v)
            if not spec.is_tensor:
                out.append(_other_input(name, v))
                continue
            if not isinstance(v, torch.Tensor):
                raise InputError(f"input {name!r} must be a torch.Tensor, got {type(v).__name__}")
            want = _torch_dtype(spec.dtype)
            if want is not None:
                want = self._onnx_mode.compute_dtype(want)  # after .half(): float16 where the graph says float32
            if want is not None and v.dtype != want:
                raise InputError(f"input {name!r} must have dtype {want}, got {v.dtype} (no implicit casts)")
            call.shape(spec, v.shape)
            out.append(v)
        return tuple(out)


def _other_input(name: str, v: Any) -> Any:
    """A sequence (list of tensors) or optional (None, tensor or sequence) graph input, numpy converted."""
    if v is None or isinstance(v, torch.Tensor):
        return v
    if isinstance(v, (list, tuple)):
        items = [dtypes.from_numpy(x) if isinstance(x, np.ndarray) else x for x in v]
        for x in items:
            if not isinstance(x, torch.Tensor):
                raise InputError(f"input {name!r} is a sequence of tensors, got an item of type {type(x).__name__}")
        return items
    raise InputError(f"input {name!r} must be a tensor, a list of tensors or None, got {type(v).__name__}")



class _Locate(fx.Interpreter):
    """Re-runs a failed call node by node to find the ONNX node that fails."""

    failed: fx.Node | None = None

    def run_node(self, n: fx.Node) -> Any:
        try:
            return super().run_node(n)
        except Exception:
            if self.failed is None:
                self.failed = n
            raise


def _call_failure(module: OnnxModule, args: tuple, exc: Exception) -> ConversionError:
    """A framework error at call time, as a ConversionError naming the ONNX node where it happened."""
    locate = _Locate(module)
    try:
        with torch.no_grad():
            locate.run(*args)
    except Exception:  # noqa: BLE001 - the same failure again: we only want where it happened
        pass
    n = locate.failed
    if n is not None and "onnx_node" in n.meta:
        domain, op = n.meta.get("onnx_op", ("", "?"))
        where = f"node {n.meta['onnx_node'] or '<unnamed>'!r} ({domain or 'ai.onnx'}::{op})"
    else:
        where = f"fx node {n.name!r}" if n is not None else "the model"
    return ConversionError(f"running {where} failed: {type(exc).__name__}: {exc}")



def _torch_dtype(dtype: ir.DataType | None) -> torch.dtype | None:
    """The torch dtype an input of ONNX type ``dtype`` must have (None: not checked)."""
    if dtype is None:
        return None
    try:
        return dtypes.to_torch_dtype(dtype)
    except ConversionError:
        return None



__all__ = ["OnnxModule"]
