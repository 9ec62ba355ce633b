"""Flax NNX layers traced as single primitives of our own, during an export only.

Tracing a Flax layer runs its Python (dtype promotion, reshapes, ``jnp`` helpers that are
``jit``-wrapped), and the export then re-finds LayerNorm / Attention / Gemm in the low-level ops
it produced. While :func:`intercepting` is active (around the exporter's ``jax.make_jaxpr``),
``nnx.Linear``, ``nnx.LayerNorm``, ``nnx.MultiHeadAttention``, ``nnx.Conv`` and ``nnx.BatchNorm``
calls that are plainly supported
bind one primitive each (``onnxport_nnx_linear`` ...); its export primitive writes the ONNX ops the
old path ends with. Every other call runs the layer's own ``__call__``: each family's
``intercept`` returns ``NotImplemented`` unless it handles the call (see the family files in
:mod:`onnxport_jax.ops.export`: ``nnx_linear``, ``nnx_layer_norm``, ``nnx_attention``, ``nnx_conv``, ``nnx_batch_norm``).

The patch is on the layer classes, so it is visible to every thread while an export runs; a call
is intercepted only on the thread that runs the export (a thread-local says so), and the classes
get their own ``__call__`` back when the last export leaves. Flax is optional: the classes are
patched only when ``flax.nnx`` is already imported (no Flax layer exists otherwise), so an
export of a plain function never imports Flax.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from onnxport.optional import loaded

from .layer_state import local

#: False: exports trace every layer through its own ``__call__`` (to compare the two paths)
enabled = True

_lock = threading.Lock()
_active = 0
_saved: list[tuple[type, Any]] = []
_saved_functions: list[tuple[Any, str, Any]] = []
#: whether the layer classes carry the patch now
_patched = False


def _families() -> list[Any]:
    from .ops.export import nnx_attention, nnx_batch_norm, nnx_conv, nnx_layer_norm, nnx_linear

    return [nnx_linear, nnx_layer_norm, nnx_attention, nnx_conv, nnx_batch_norm]


def min_opset(target: str) -> int | None:
    """For a layer primitive's registry key (``lax.onnxport_nnx_linear``): the lowest opset it is
    used at; None for any other key."""
    for fam in _families():
        if target == f"lax.{fam.layer_primitive().name}":
            return fam.MIN_OPSET
    return None


def _wrap(cls: type, own: Any, family: Any) -> Any:
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        opset = getattr(local, "opset", None)
        if opset is not None and type(self) is cls:  # a subclass may change what the layer does
            out = family.intercept(self, opset, args, kwargs)
            if out is not NotImplemented:
                return out
        return own(self, *args, **kwargs)

    __call__.__wrapped__ = own  # type: ignore[attr-defined]
    return __call__


@contextlib.contextmanager
def intercepting(opset: int) -> Iterator[None]:
    """Flax NNX layer calls on this thread bind onnxport layer primitives inside the block."""
    global _active, _patched
    if not enabled:
        yield
        return
    with _lock:
        if not _patched and loaded("flax.nnx") is not None:
            _patched = True
            for fam in _families():
                cls = fam.layer_class()
                own = cls.__dict__["__call__"]
                _saved.append((cls, own))
                cls.__call__ = _wrap(cls, own, fam)
                for owner, name, make in getattr(fam, "function_patches", list)():
                    own_fn = owner.__dict__[name]
                    _saved_functions.append((owner, name, own_fn))
                    setattr(owner, name, make(own_fn))
        _active += 1
    outer = getattr(local, "opset", None), getattr(local, "made", None)
    local.opset, local.made = opset, {}
    try:
        yield
    finally:
        local.opset, local.made = outer
        with _lock:
            _active -= 1
            if _active == 0 and _patched:
                _patched = False
                while _saved:
                    cls, own = _saved.pop()
                    cls.__call__ = own
                while _saved_functions:
                    owner, name, own_fn = _saved_functions.pop()
                    setattr(owner, name, own_fn)
