"""The per-node context a JAX import primitive receives as ``ctx``."""

from __future__ import annotations

import contextvars
from typing import Any

import jax
import numpy as np
import onnx_ir as ir

from onnxport.driver import node_label
from onnxport.errors import ConversionError, InputError

from . import dtypes


class DataDependentError(ConversionError):
    """A node needs concrete values (an output shape that depends on data) but got traced ones.

    Raised under ``jax.jit`` (or ``vmap``/``grad`` tracing) by ops such as NonZero, Unique or a
    Reshape whose target shape is computed from data; call the model without ``jax.jit``.
    """


def _shape(v: ir.Value | None) -> tuple[int | str | None, ...] | None:
    if v is None or v.shape is None:
        return None
    return tuple(d if isinstance(d, int) else getattr(d, "value", None) for d in v.shape)


class Mode:
    """Train/eval flag shared by an imported model and its node contexts (read at trace time)."""

    __slots__ = ("training",)

    def __init__(self) -> None:
        self.training = False


class CallState:
    """What one ``apply`` call adds to the import-time facts: its PRNG key, its train/eval
    override and the running-statistics updates its nodes produce (BatchNormalization)."""

    __slots__ = ("rng", "training", "updates")

    def __init__(self, rng: Any = None, training: bool | None = None):
        self.rng = rng
        self.training = training
        self.updates: dict[str, Any] = {}


#: the state of the ``apply`` call being traced or run (None outside one)
CALL: contextvars.ContextVar[CallState | None] = contextvars.ContextVar("onnxport_jax_call", default=None)


def is_static(x: Any) -> bool:
    """Whether ``x`` is a value known at trace time (numpy array/scalar, or a list of them)."""
    if x is None or isinstance(x, (np.ndarray, np.generic, int, float, bool)):
        return True
    if isinstance(x, (list, tuple)):
        return all(is_static(e) for e in x)
    return False


class NodeContext:
    """Static facts about one node, fixed at import time.

    Primitives run when the model is applied, on ``jax.Array`` values (tracers under ``jax.jit``)
    or on numpy values for everything computed from static shapes and constants. ``ctx`` tells
    them what the model knew when it was imported: import-time values of constant inputs, ONNX
    dtypes and shapes, the node's name, opset and outputs; it raises errors naming the node.
    """

    def __init__(self, node: ir.Node, opset: int, version: int, mode: Mode,
                 consts: dict[int, np.ndarray] | None = None, index: int = 0,
                 param_keys: dict[int, str] | None = None):
        self.name: str = node.name or ""
        self.label: str = node_label(node)
        self.op_type: str = node.op_type
        self.domain: str = node.domain
        self.opset: int = opset
        self.version: int = version
        self.num_inputs: int = len(node.inputs)
        self.num_outputs: int = len(node.outputs)
        self.input_dtypes: tuple[ir.DataType | None, ...] = tuple(
            v.dtype if v is not None else None for v in node.inputs
        )
        self.output_dtypes: tuple[ir.DataType | None, ...] = tuple(v.dtype for v in node.outputs)
        self.input_shapes = tuple(_shape(v) for v in node.inputs)
        self.output_shapes = tuple(_shape(v) for v in node.outputs)
        self.outputs_used: tuple[bool, ...] = tuple(
            bool(v.name) and (bool(v.uses()) or v.is_graph_output()) for v in node.outputs
        )
        self._consts = dict(consts or {})
        self._mode = mode
        self._index = index  # unique per node of the model: folded into the call's PRNG key
        self._param_keys = dict(param_keys or {})

    # -- static facts -------------------------------------------------------------------
    def const(self, i: int) -> np.ndarray | None:
        """The import-time value of non-trainable input ``i`` (shape, index, constant) or None."""
        return self._consts.get(i)

    def input_dtype(self, i: int) -> ir.DataType | None:
        return self.input_dtypes[i] if i < len(self.input_dtypes) else None

    def output_dtype(self, i: int = 0) -> ir.DataType | None:
        return self.output_dtypes[i] if i < len(self.output_dtypes) else None

    def output_np_dtype(self, i: int = 0) -> np.dtype | None:
        """The numpy (= JAX) dtype of output ``i``, if known."""
        dt = self.output_dtype(i)
        try:
            return dtypes.to_numpy_dtype(dt) if dt is not None else None
        except ConversionError:
            return None

    #: the same as :meth:`output_np_dtype` (JAX arrays use numpy dtypes)
    output_jax_dtype = output_np_dtype

    def input_shape(self, i: int) -> tuple[int | str | None, ...] | None:
        """Static shape of input ``i`` (ints, symbolic names, or None), if known."""
        return self.input_shapes[i] if i < len(self.input_shapes) else None

    def output_used(self, i: int) -> bool:
        """Whether output ``i`` exists and is read by anything."""
        return i < len(self.outputs_used) and self.outputs_used[i]

    @property
    def training(self) -> bool:
        """Whether this call runs in training mode (Dropout, BatchNormalization): the
        ``training=`` argument of ``apply`` if given, else the model's mode (``model.train()``)."""
        call = CALL.get()
        if call is not None and call.training is not None:
            return call.training
        return self._mode.training

    def rng(self, seed: float | None = None) -> jax.Array:
        """A PRNG key for this node: from the ``seed`` attribute when set (the same draws on
        every call), else this call's key (``apply(..., rng=key)``) folded with the node's index,
        so every node of every call with a fresh key draws fresh values."""
        if seed is not None:
            return jax.random.key(int(seed))
        call = CALL.get()
        if call is None or call.rng is None:
            raise InputError(
                f"node {self.label} draws random values and has no seed: pass a PRNG key, "
                "model.apply(params, *inputs, rng=jax.random.key(n)); model(...) draws one per call"
            )
        key = call.rng
        if not jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
            key = jax.random.wrap_key_data(key)  # a raw uint32[2] key (jax.random.PRNGKey)
        return jax.random.fold_in(key, self._index)

    def param_key(self, i: int) -> str | None:
        """The ``params`` name of input ``i`` when it is a trainable initializer, else None."""
        return self._param_keys.get(i)

    def update(self, i: int, value: Any) -> None:
        """Report a new value for initializer input ``i`` (BatchNormalization's running
        statistics in training mode); ``apply(..., return_updates=True)`` returns them by name."""
        call, key = CALL.get(), self._param_keys.get(i)
        if call is not None and key is not None:
            call.updates[key] = value

    def error(self, message: str) -> ConversionError:
        """A ConversionError naming this node: ``raise ctx.error("...")``."""
        return ConversionError(f"node {self.label} (opset {self.opset}): {message}")

    # -- static values --------------------------------------------------------------------
    is_static = staticmethod(is_static)

    def concrete(self, x: Any, what: str = "this input") -> np.ndarray:
        """``x`` as a numpy array; raises :class:`DataDependentError` if it is traced.

        For values that decide an output shape (NonZero, Unique, data-dependent sizes): they
        are known outside ``jax.jit``, or under it when computed from static shapes/constants.
        """
        if isinstance(x, (np.ndarray, np.generic)):
            return np.asarray(x)
        try:
            return np.asarray(x)
        except Exception as exc:  # jax raises TracerArrayConversionError & co. for tracers
            raise self.data_dependent(what) from exc

    def data_dependent(self, what: str = "the output shape") -> DataDependentError:
        """The error for a value that must be concrete but is traced (name the node)."""
        return DataDependentError(
            f"node {self.label} (opset {self.opset}): {what} depends on input data, which is "
            "traced under jax.jit/vmap/grad; JAX needs static shapes: run the model without "
            "jax.jit, or make the value a constant of the model"
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
