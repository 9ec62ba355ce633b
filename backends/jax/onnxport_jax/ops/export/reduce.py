"""Reductions: reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or, argmax,
argmin (-> ReduceSum ..., ArgMax, ArgMin; axes as an input, the newest form)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import onnx_ir as ir

from onnxport import Sample, exporter

from ._samples import randint, randn

_X = randn(2, 3, 4)


def _reduce(name: str, onnx_op: str, fn, args) -> None:
    def prim(g, x, *, axes, **_):
        if not axes:
            return g.op("Identity", x)
        if g.out_dtype() == ir.DataType.BOOL:
            y = g.op(onnx_op, g.cast(x, ir.DataType.INT32), g.const(np.asarray(axes, dtype=np.int64)), keepdims=0)
            return g.cast(y, ir.DataType.BOOL)
        return g.op(onnx_op, x, g.const(np.asarray(axes, dtype=np.int64)), keepdims=0)

    prim.__name__ = prim.__qualname__ = name
    prim.__doc__ = f"lax.{name} -> {onnx_op}."
    prim.__module__ = __name__
    globals()[name] = exporter(f"lax.{name}", samples=[Sample(fn, args, emits=(onnx_op,))])(prim)


_reduce("reduce_sum", "ReduceSum", lambda x: jnp.sum(x, axis=(0, 2)), (_X,))
_reduce("reduce_max", "ReduceMax", lambda x: jnp.max(x, axis=1), (_X,))
_reduce("reduce_min", "ReduceMin", lambda x: jnp.min(x, axis=-1), (_X,))
_reduce("reduce_prod", "ReduceProd", lambda x: jnp.prod(x, axis=0), (_X,))
_reduce("reduce_and", "ReduceMin", lambda x: jnp.all(x > -1, axis=1), (_X,))
_reduce("reduce_or", "ReduceMax", lambda x: jnp.any(x > 1, axis=1), (_X,))


def _arg(name: str, onnx_op: str, fn) -> None:
    def prim(g, x, *, axes, index_dtype):
        y = g.op(onnx_op, x, axis=int(axes[0]), keepdims=0)
        return g.cast(y, g.onnx_dtype(index_dtype))

    prim.__name__ = prim.__qualname__ = name
    prim.__doc__ = f"lax.{name} -> {onnx_op} (the first index of ties), cast to the index type."
    prim.__module__ = __name__
    samples = [Sample(fn, (_X,), emits=(onnx_op,)), Sample(fn, (randint(0, 3, 4, 5),), emits=(onnx_op,), name="ties")]
    globals()[name] = exporter(f"lax.{name}", samples=samples)(prim)


_arg("argmax", "ArgMax", lambda x: jnp.argmax(x, axis=1))
_arg("argmin", "ArgMin", lambda x: jnp.argmin(x, axis=-1))
