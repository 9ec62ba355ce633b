"""The per-node context a TensorFlow import primitive receives as ``ctx``."""

from __future__ import annotations

import contextvars
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import ConversionError
from onnxport.importing import context as _core
from onnxport.importing.context import Mode  # noqa: F401 - the train/eval flag, shared with the core

from . import dtypes


class DataDependentError(ConversionError):
    """A node needs a concrete value (a shape, an axis list) that is only known when the graph runs.

    Raised while tracing ``tf.function`` for attributes TensorFlow needs at trace time (an
    axis, a split count), when they are computed from input data instead of being constants.
    ``value`` is the traced value the primitive asked about (when it named one); ``needs`` the
    node inputs it depends on (set by the step that ran the node), from which
    :mod:`onnxport_tensorflow.specialize` finds the graph inputs to specialise on.
    """

    value: Any = None
    needs: list[Any] | None = None


class CallState:
    """What one traced call adds to the import-time facts: its seed and the variable updates
    (BatchNormalization's running statistics in training mode) its nodes produce."""

    __slots__ = ("seed", "updates", "variables")

    def __init__(self, seed: Any = None, variables: dict[str, Any] | None = None):
        self.seed = seed
        self.variables = variables or {}
        self.updates: list[tuple[Any, Any]] = []


#: the state of the call being traced or run (None outside one)
CALL: contextvars.ContextVar[CallState | None] = contextvars.ContextVar("onnxport_tf_call", default=None)


def is_static(x: Any) -> bool:
    """Whether ``x`` is a value known at trace time (numpy array/scalar, or a list of them)."""
    if x is None or isinstance(x, (np.ndarray, np.generic, int, float, bool, str, bytes)):
        return True
    if isinstance(x, (list, tuple)):
        return all(is_static(e) for e in x)
    return False


def is_eager(x: Any) -> bool:
    """Whether ``x`` is a tensor holding concrete data (eager execution)."""
    return isinstance(x, tf.Tensor) and hasattr(x, "numpy") and not isinstance(x, tf.Variable) \
        and tf.executing_eagerly()


class NodeContext(_core.NodeContext):
    """Static facts about one node, fixed at import time.

    Primitives run when the model is traced (inside ``tf.function``) on ``tf.Tensor`` values, or
    on numpy values for everything computed from static shapes and constants. ``ctx`` tells them
    what the model knew when it was imported: import-time values of constant inputs, ONNX dtypes
    and shapes, the node's name, opset and outputs; it raises errors naming the node.
    """

    def __init__(self, node: ir.Node, opset: int, version: int, mode: Mode,
                 consts: dict[int, np.ndarray] | None = None, index: int = 0,
                 param_keys: dict[int, str] | None = None):
        super().__init__(node, opset, version, consts)
        self._mode = mode
        self._index = index
        self._param_keys = dict(param_keys or {})

    # -- static facts -------------------------------------------------------------------
    def output_np_dtype(self, i: int = 0) -> np.dtype | None:
        """The numpy dtype of output ``i``, if known."""
        dt = self.output_dtype(i)
        try:
            return dtypes.to_numpy_dtype(dt) if dt is not None else None
        except ConversionError:
            return None

    def output_tf_dtype(self, i: int = 0) -> tf.DType | None:
        """The TensorFlow dtype of output ``i``, if known and TensorFlow has one."""
        dt = self.output_dtype(i)
        return dtypes.to_tf_dtype(dt) if dtypes.has_tf_dtype(dt) else None

    @property
    def training(self) -> bool:
        """Whether the model runs in training mode (Dropout, BatchNormalization)."""
        return self._mode.training

    @property
    def index(self) -> int:
        """A number unique to this node in its model (seeds per-node random streams)."""
        return self._index

    def param_key(self, i: int) -> str | None:
        """The variable name of input ``i`` when it is a trainable initializer, else None."""
        return self._param_keys.get(i)

    def update(self, i: int, value: Any) -> None:
        """Assign ``value`` to the variable of initializer input ``i`` after the call (running
        statistics); a no-op when that input is not held in a variable."""
        call, key = CALL.get(), self._param_keys.get(i)
        if call is not None and key in call.variables:
            var = call.variables[key]
            call.updates.append((var, tf.cast(value, var.dtype)))

    # -- static values --------------------------------------------------------------------
    is_static = staticmethod(is_static)

    def concrete(self, x: Any, what: str = "this input") -> np.ndarray:
        """``x`` as a numpy array; raises :class:`DataDependentError` if it is only known at run time."""
        if isinstance(x, (np.ndarray, np.generic)):
            return np.asarray(x)
        if isinstance(x, (int, float, bool)):
            return np.asarray(x)
        if isinstance(x, tf.Tensor) and not isinstance(x, tf.Variable):
            try:
                return x.numpy()
            except Exception as exc:  # a symbolic tensor inside tf.function
                err = self.data_dependent(what)
                err.value = x
                raise err from exc
        if isinstance(x, (list, tuple)):
            return np.asarray([self.concrete(e, what) for e in x])
        raise self.data_dependent(what)

    def data_dependent(self, what: str = "the output shape") -> DataDependentError:
        """The error for a value that must be concrete but is computed from input data."""
        return DataDependentError(
            f"node {self.label} (opset {self.opset}): {what} depends on input data, which "
            "TensorFlow only knows when the graph runs; make the value a constant of the model"
        )

    def __repr__(self) -> str:
        return f"NodeContext({self.label}, version={self.version})"


def ints(ctx: NodeContext, i: int, x: Any) -> list[int] | None:
    """Input ``i`` as a list of ints (shapes, axes, sizes): static value, else concrete ``x``."""
    if x is None:
        return None
    c = ctx.const(i)
    if c is None:
        c = ctx.concrete(x, f"input {i} (a shape, axes or size)")
    return [int(v) for v in np.asarray(c).reshape(-1)]
