"""The objects the TensorFlow exporter takes: Keras models, tf.functions, tf.Modules, restored
SavedModels; their traceable function, variable names and example-input shapes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from onnxport.errors import InputError


def _is_keras(obj: Any) -> bool:
    keras = __import__("sys").modules.get("keras")
    return keras is not None and isinstance(obj, keras.layers.Layer)


def _traceable(obj: Any) -> tuple[Callable[..., Any], Any]:
    """``(function to wrap in tf.function, the object whose variables are named)``."""
    if _is_keras(obj):
        return (lambda *a: obj(*a, training=False)), obj
    if isinstance(obj, tf.types.experimental.ConcreteFunction):  # a traced signature (SavedModel's)
        return obj, None
    call = obj.__call__ if callable(obj) else None
    if isinstance(obj, tf.__internal__.tracking.AutoTrackable) and hasattr(call, "get_concrete_function"):
        return call, obj  # a reloaded SavedModel
    if isinstance(obj, tf.Module) and hasattr(call, "get_concrete_function"):
        return call, obj
    if hasattr(obj, "get_concrete_function"):  # a tf.function
        return obj, None
    if isinstance(obj, tf.Module) or callable(obj):
        return obj, obj if isinstance(obj, tf.Module) else None
    raise InputError(f"export_model exports a Keras model, a tf.function or a tf.Module, not {type(obj).__name__}")


def variable_names(obj: Any, fn: Any) -> dict[int, tuple[str, Any]]:
    """id(resource handle) -> (initializer name, variable) for the variables ``obj`` holds."""
    found: list[tuple[str, Any]] = []
    if _is_keras(obj):
        prefix = f"{obj.name}/"
        for v in obj.variables:
            path = getattr(v, "path", None) or v.name
            if path.startswith(prefix) and hasattr(obj, "layers"):
                path = path[len(prefix):]
            found.append((path, getattr(v, "value", v)))
    holders = [obj] if isinstance(obj, tf.Module) and not _is_keras(obj) else []
    holders += [h for h in (getattr(fn, "__self__", None),) if isinstance(h, tf.Module)]
    for holder in holders:
        named = getattr(holder, "weights", None)
        if isinstance(named, dict) and all(isinstance(v, tf.Variable) for v in named.values()):
            found.extend(named.items())  # a module imported from ONNX: its initializer names
            continue
        try:
            held = list(holder.variables)
        except Exception:  # a module whose attributes tf.Module cannot walk: the trace's captures name them
            held = []
        for v in held:
            found.append((v.name.split(":")[0], v))
    out: dict[int, tuple[str, Any]] = {}
    taken: set[str] = set()
    for name, var in found:
        handle = getattr(var, "handle", None)
        if handle is None or id(handle) in out:
            continue
        base, i = name, 0
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        out[id(handle)] = (name, var)
    return out


def _closure_variables(cf: Any, known: dict[int, tuple[str, Any]]) -> None:
    """Captured variables of ``cf`` no holder named (closed over by a plain tf.function)."""
    for var in getattr(cf, "variables", ()) or ():
        handle = getattr(var, "handle", None)
        if handle is not None and id(handle) not in known:
            name = var.name.split(":")[0]
            taken = {n for n, _ in known.values()}
            base, i = name, 0
            while name in taken:
                i += 1
                name = f"{base}_{i}"
            known[id(handle)] = (name, var)


def _is_concrete(fn: Any) -> bool:
    return isinstance(fn, tf.types.experimental.ConcreteFunction)


def _concrete_shapes(cf: Any, args: Sequence[tf.Tensor], wanted: list[list[Any]]) -> list[list[Any]]:
    """The input dims of an already traced function: its static dims, the others named
    (``wanted``'s names where given, ``batch`` for dim 0, ``d<i>`` else)."""
    captured = {internal.name for _, internal in cf.graph.captures}
    placeholders = [t for t in cf.graph.inputs if t.name not in captured and t.dtype != tf.resource]
    if len(placeholders) != len(args):
        raise InputError(f"the function takes {len(placeholders)} tensor inputs, {len(args)} were given")
    out = []
    for t, want in zip(placeholders, wanted):
        if t.shape.rank is None:
            out.append(list(want))
            continue
        dims: list[Any] = []
        for i, d in enumerate(t.shape.as_list()):
            w = want[i] if i < len(want) else None
            dims.append(d if d is not None else (w if isinstance(w, str) else ("batch" if i == 0 else f"d{i}")))
        out.append(dims)
    return out


def _as_tensors(example_inputs: Any) -> tuple[Any, ...]:
    if isinstance(example_inputs, tuple):
        args = example_inputs
    elif isinstance(example_inputs, list):
        args = tuple(example_inputs)
    else:
        args = (example_inputs,)
    return tuple(tf.convert_to_tensor(a) for a in args)


def _input_shapes(args: Sequence[tf.Tensor], dynamic_shapes: Any, nchw: Sequence[int]) -> list[list[int | str | None]]:
    """Per input: ONNX dims (symbolic names as strings). Dim 0 is ``batch`` unless told otherwise."""
    if dynamic_shapes is None:
        specs: list[Any] = [{0: "batch"} if a.shape.rank else None for a in args]
    else:
        specs = list(dynamic_shapes) + [None] * (len(args) - len(dynamic_shapes))
    out = []
    for a, spec in zip(args, specs):
        dims: list[int | str | None] = list(a.shape.as_list())
        items = spec.items() if isinstance(spec, dict) else enumerate(spec or ())
        for axis, name in items:
            if name is not None:
                dims[axis] = name if isinstance(name, str) else getattr(name, "__name__", f"d{axis}")
        out.append(dims)
    return out
