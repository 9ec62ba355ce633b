"""The per-node context a JAX import primitive receives as ``ctx``."""

from __future__ import annotations

import contextvars
from typing import Any

import jax
import numpy as np
import onnx_ir as ir

from onnxport.errors import ConversionError, InputError
from onnxport.importing import context as _core

from . import dtypes


class DataDependentError(ConversionError):
    """A node needs concrete values (an output shape that depends on data) but got traced ones.

    Raised under ``jax.jit`` (or ``vmap``/``grad`` tracing) by ops such as NonZero, Unique or a
    Reshape whose target shape is computed from data; call the model without ``jax.jit``.
    """


class Mode(_core.Mode):
    """Train/eval flag shared by an imported model and its node contexts (read at trace time)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(training=False)


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


class NodeContext(_core.NodeContext):
    """Static facts about one node, fixed at import time (:class:`onnxport.importing.context.NodeContext`).

    Primitives run when the model is applied, on ``jax.Array`` values (tracers under ``jax.jit``)
    or on numpy values for everything computed from static shapes and constants. ``ctx`` tells
    them what the model knew when it was imported: import-time values of constant inputs, ONNX
    dtypes and shapes, the node's name, opset and outputs; it raises errors naming the node.
    """

    def __init__(self, node: ir.Node, opset: int, version: int, mode: Mode,
                 consts: dict[int, np.ndarray] | None = None, index: int = 0,
                 param_keys: dict[int, str] | None = None):
        super().__init__(node, opset, version, consts)
        self._mode = mode
        self._index = index  # unique per node of the model: folded into the call's PRNG key
        self._param_keys = dict(param_keys or {})

    def output_np_dtype(self, i: int = 0) -> np.dtype | None:
        """The numpy (= JAX) dtype of output ``i``, if known."""
        dt = self.output_dtype(i)
        try:
            return dtypes.to_numpy_dtype(dt) if dt is not None else None
        except ConversionError:
            return None

    #: the same as :meth:`output_np_dtype` (JAX arrays use numpy dtypes)
    output_jax_dtype = output_np_dtype

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



def ints(ctx: NodeContext, i: int, x: Any) -> list[int] | None:
    """Input ``i`` as a list of ints (shapes, axes, sizes): static value, else concrete ``x``."""
    if x is None:
        return None
    c = ctx.const(i)
    if c is None:
        c = ctx.concrete(x, f"input {i} (a shape, axes or size)")
    return [int(v) for v in np.asarray(c).reshape(-1)]
