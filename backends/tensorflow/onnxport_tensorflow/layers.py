"""Keras layers exported whole: which calls the trace recorded, and which ops they replace.

A layer primitive is a module export primitive registered for a Keras layer class with
:func:`onnxport.module_exporter` (``@module_exporter(keras.layers.LSTM)``; the registry refuses a
second one for the same class) and called as ``fn(g, layer, *inputs)``; its ``when(layer,
*traced_inputs)`` may decline a call, which is then exported op by op. While the exporter traces,
every layer of those exact classes has
its ``call`` wrapped so that the call's input and output tensors are recorded; the ops between
them (the LSTM's While loop, its TensorLists ...) are then skipped and the primitive emits the
layer once, from its weights, where its first output is first read. A recorded call inside
another (a Bidirectional's LSTMs) belongs to the outer one. Calls whose ops would be skipped
anyway are not traced at all where the output's form is known beforehand: a normalization layer
is traced as an Identity, a recurrent layer returning one tensor as zeros of its output shape.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import tensorflow as tf


@dataclasses.dataclass
class LayerCall:
    """One traced call of a layer that has a layer primitive."""

    layer: Any
    kind: str
    inputs: list[tf.Tensor]
    outputs: list[tf.Tensor]
    kwargs: dict[str, Any]


def _sublayers(obj: Any) -> list[Any]:
    keras = __import__("sys").modules.get("keras")
    if keras is None or not isinstance(obj, keras.layers.Layer):
        return []
    return [obj] + [layer for layer in obj._flatten_layers(include_self=False, recursive=True)]


#: layers whose result has the input's shape and dtype: a call is traced as one Identity stand-in
#: (the layer primitive emits it; a BatchNormalization's traced ops are most of a CNN's trace time)
_SAME_SHAPE = {"BatchNormalization", "LayerNormalization"}
#: recurrent layers returning one tensor: a call is traced as zeros of the layer's output shape
#: (the While loop Keras builds for one is most of a recurrent model's trace time)
_RECURRENT = {"LSTM", "GRU", "SimpleRNN", "Bidirectional"}


def _recurrent_stand_in(layer: Any, x: Any) -> tf.Tensor | None:
    """Zeros shaped as ``layer``'s single output for input ``x`` (its unknown dims are ``x``'s
    dims at the same position: batch, time), or None where that does not describe the call."""
    if (not isinstance(x, tf.Tensor) or not hasattr(x, "graph") or x.dtype != tf.as_dtype(layer.compute_dtype)
            or getattr(layer, "return_state", False) or getattr(layer, "stateful", False) or x.shape.rank is None):
        return None
    dims = x.shape.as_list()
    try:
        shape = layer.compute_output_shape(tuple(dims))
    except Exception:  # noqa: BLE001 - a shape Keras cannot tell: the call is traced
        return None
    if not isinstance(shape, tuple) or not all(d is None or isinstance(d, int) for d in shape):
        return None
    if any(d is None and (i >= len(dims) or dims[i] is not None) for i, d in enumerate(shape)):
        return None
    dynamic = tf.shape(x)
    parts = [dynamic[i:i + 1] if d is None else tf.constant([d], tf.int32) for i, d in enumerate(shape)]
    return tf.zeros(tf.concat(parts, 0), dtype=x.dtype, name="keras_layer_stand_in")


@contextlib.contextmanager
def recording(obj: Any, registry: Any, calls: list[LayerCall]) -> Iterator[None]:
    """Wrap the ``call`` of each layer of ``obj`` whose class has a layer primitive."""
    depth = [0]
    wrapped = []
    for layer in _sublayers(obj):
        kind = type(layer).__name__
        prim = registry.find_module_export("tensorflow", type(layer))
        if prim is None:
            continue
        if "call" in layer.__dict__:
            continue
        original = layer.call

        def call(*args: Any, _layer: Any = layer, _kind: str = kind, _orig: Any = original, _when: Any = prim.when,
                 **kwargs: Any) -> Any:
            if depth[0] == 0 and _kind in _SAME_SHAPE and len(args) == 1 and not kwargs.get("mask"):
                x = args[0]
                if (isinstance(x, tf.Tensor) and hasattr(x, "graph") and x.dtype == tf.as_dtype(_layer.compute_dtype)
                        and (_when is None or _when(_layer, x))):
                    # the primitive emits the layer from its weights: its ops need not be traced
                    out = tf.identity(x, name="keras_layer_stand_in")
                    calls.append(LayerCall(_layer, _kind, [x], [out], dict(kwargs)))
                    return out
            if (depth[0] == 0 and _kind in _RECURRENT and len(args) == 1 and _when is None
                    and all(v is None for k, v in kwargs.items() if k != "training")):
                out = _recurrent_stand_in(_layer, args[0])
                if out is not None:
                    calls.append(LayerCall(_layer, _kind, [args[0]], [out], dict(kwargs)))
                    return out
            depth[0] += 1
            try:
                out = _orig(*args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                ins = [t for t in tf.nest.flatten(args[:1]) if isinstance(t, tf.Tensor)]
                outs = [t for t in tf.nest.flatten(out) if isinstance(t, tf.Tensor)]
                if (ins and outs and all(hasattr(t, "graph") for t in ins + outs)
                        and (_when is None or _when(_layer, *ins))):
                    calls.append(LayerCall(_layer, _kind, ins, outs, dict(kwargs)))
            return out

        object.__setattr__(layer, "call", call)
        wrapped.append(layer)
    try:
        yield
    finally:
        for layer in wrapped:
            object.__delattr__(layer, "call")


def plan(calls: list[LayerCall], graph: Any, outputs: list[Any]) -> tuple[set[str], dict[str, list[LayerCall]]]:
    """``(names of ops not to convert, op name -> the layer calls emitted just before it)``.

    Not converted: ops the outputs do not depend on (Keras traces a recurrent cell once outside
    its loop, for shapes) and the ops of each recorded layer call. An op of a call whose result
    a live op outside it reads (a shape shared with other code) is kept.
    """
    ops = graph.get_operations()
    live: set[str] = set()
    stack = [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op.name in live:
            continue
        live.add(op.name)
        stack.extend(t.op for t in op.inputs)
    unique: dict[tuple[str, ...], LayerCall] = {}
    for call in calls:
        unique.setdefault(tuple(t.name for t in call.outputs), call)
    calls = list(unique.values())
    order = {op.name: i for i, op in enumerate(ops)}
    skip: set[str] = {op.name for op in ops if op.name not in live}
    emit_at: dict[str, list[LayerCall]] = {}
    for call in calls:
        stop = {t.name for t in call.inputs}
        inner: set[str] = set()
        stack = [t.op for t in call.outputs]
        while stack:
            op = stack.pop()
            if op.name in inner or op.type == "Placeholder" and not _is_resource(op):
                continue
            inner.add(op.name)
            for t in list(op.inputs) + [c.outputs[0] for c in op.control_inputs if c.outputs]:
                if t.name not in stop:
                    stack.append(t.op)
        out_names = {t.name for t in call.outputs}
        # live ops outside that read an inner tensor (other than the outputs) keep its producers
        kept: set[str] = set()
        for name in list(inner):
            for t in graph.get_operation_by_name(name).outputs:
                if t.name in out_names:
                    continue
                if any(c.name not in inner and c.name in live for c in t.consumers()):
                    kept |= _ancestors(t.op, inner)
        inner -= kept
        skip |= inner
        readers = [c for t in call.outputs for c in t.consumers() if c.name not in inner and c.name in live]
        first = min(readers, key=lambda op: order[op.name]) if readers else ops[-1]
        emit_at.setdefault(first.name, []).append(call)
    return skip, emit_at


def _is_resource(op: Any) -> bool:
    return bool(op.outputs) and op.outputs[0].dtype == tf.resource


def _ancestors(op: Any, within: set[str]) -> set[str]:
    out: set[str] = set()
    stack = [op]
    while stack:
        o = stack.pop()
        if o.name in out or o.name not in within:
            continue
        out.add(o.name)
        stack.extend(t.op for t in o.inputs)
    return out
