"""How ``export_model`` calls a Keras model or layer with the example inputs it was given.

A Keras user calls a two-input model as ``model([a, b])`` (or ``model({"a": a, "b": b})``), a
torch user as ``model(a, b)``; both forms are taken, and so are ``([a, b],)`` and a dict:

- a functional model: its inputs (``model.inputs``, in that order, named by their ``Input``
  layers) are given one example each, positionally (``(a, b)``), as one list (``([a, b],)`` or
  ``[a, b]``) or as a dict keyed by input name; the model is called with its own input structure
  (list or dict);
- any other model or layer (subclassed): the examples are its ``call``'s positional arguments
  when their count fits (``call(self, x, y)`` given ``(a, b)``; the arguments counted are the
  leading ones that are required or default to None, a flag such as
  ``return_attention_scores=False`` ends them); several plain tensors given to a
  ``call`` that takes one argument are passed as one list (``call(self, inputs)`` given
  ``(a, b)``); an example that is itself a list, tuple or dict is passed as that structure.

The graph inputs are the examples' tensors, flattened in that order. When no form fits, the
:class:`~onnxport.errors.InputError` says what the call takes (its parameters, or the functional
model's input names and shapes).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from onnxport.errors import InputError


@dataclasses.dataclass
class KerasCall:
    """The example inputs as graph inputs, and how the traced function calls the object."""

    #: the graph inputs' example tensors, in order
    flat: tuple[tf.Tensor, ...]
    #: their names (None: the exporter's defaults)
    names: list[str] | None
    #: flat tensors -> the positional arguments of the call
    pack: Callable[[Sequence[Any]], tuple[Any, ...]]

    def function(self, obj: Any) -> Callable[..., Any]:
        """The flat-input function the exporter traces (Keras models run with ``training=False``)."""
        return lambda *flat: obj(*self.pack(flat), training=False)


def _tensor(x: Any) -> tf.Tensor:
    return tf.convert_to_tensor(x)


def _is_structure(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _describe(example: Any) -> str:
    def one(x: Any) -> str:
        if isinstance(x, dict):
            return "{" + ", ".join(f"{k!r}: {one(v)}" for k, v in x.items()) + "}"
        if isinstance(x, (list, tuple)):
            inner = ", ".join(one(v) for v in x)
            return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
        shape = getattr(x, "shape", None)
        return f"tensor{list(shape)}" if shape is not None else type(x).__name__
    return one(example)


def keras_call(obj: Any, example_inputs: Any) -> KerasCall:
    """The call form of ``obj`` (a Keras model or layer) for ``example_inputs``; an
    :class:`InputError` saying what the call expects when no form fits."""
    struct = getattr(obj, "_inputs_struct", None)
    inputs = getattr(obj, "inputs", None) if struct is not None else None
    if struct is not None and isinstance(inputs, (list, tuple)) and inputs:
        return _functional(obj, struct, list(inputs), example_inputs)
    return _by_signature(obj, example_inputs)


# -- functional models ------------------------------------------------------------------------------
def _input_name(t: Any, i: int) -> str:
    history = getattr(t, "_keras_history", None)
    op = getattr(history, "operation", None) if history is not None else None
    return getattr(op, "name", None) or getattr(t, "name", None) or f"input_{i}"


def _functional(obj: Any, struct: Any, inputs: list[Any], example: Any) -> KerasCall:
    import keras

    names = [_input_name(t, i) for i, t in enumerate(inputs)]
    flat_struct = keras.tree.flatten(struct)
    keys = list(struct) if isinstance(struct, dict) else None
    given: list[Any] | None = None
    if isinstance(example, tuple) and len(example) == 1 and _is_structure(example[0]):
        example = example[0]  # ([a, b],) / ({"a": a},): one structured argument
    if isinstance(example, dict):
        by_name = dict(zip(names, inputs))
        if keys is not None:
            by_name.update(zip(keys, flat_struct))
        if set(example) <= set(by_name) and len(example) == len(inputs):
            order = {id(t): i for i, t in enumerate(inputs)}
            given = [None] * len(inputs)
            for k, v in example.items():
                given[order[id(by_name[k])]] = v
    elif isinstance(example, (list, tuple)):
        if len(example) == len(inputs) and not any(_is_structure(x) for x in example):
            given = list(example)
    elif len(inputs) == 1:
        given = [example]
    if given is None:
        wanted = ", ".join(f"{n!r} {tuple(t.shape)} {t.dtype}" for n, t in zip(names, inputs))
        raise InputError(
            f"{type(obj).__name__} {obj.name!r} takes {len(inputs)} input(s): {wanted}; give one example per "
            f"input, positionally ((a, b)), as one list ([a, b]) or as a dict keyed by these names; "
            f"export_model was given {_describe(example)}")
    flat = tuple(_tensor(x) for x in given)
    position = {id(t): i for i, t in enumerate(inputs)}
    # the model's own structure (list or dict) filled with the examples, by identity of its inputs
    index = [position.get(id(t)) for t in flat_struct]
    if any(i is None for i in index):
        raise InputError(f"{type(obj).__name__} {obj.name!r}: its input structure does not match model.inputs")

    def pack(values: Sequence[Any]) -> tuple[Any, ...]:
        if len(inputs) == 1 and not _is_structure(struct):
            return (values[0],)
        return (keras.tree.pack_sequence_as(struct, [values[i] for i in index]),)

    return KerasCall(flat, names, pack)


# -- layers and subclassed models: by the call's signature ----------------------------------------
_KEYWORDS = ("training", "mask")


def _signature(obj: Any) -> tuple[list[inspect.Parameter], bool, str]:
    try:
        sig = inspect.signature(obj.call)
    except (TypeError, ValueError):
        return [], True, "call(*args)"
    params = list(sig.parameters.values())
    pos = []
    for p in params:  # the leading tensor arguments: required, or defaulting to None (a flag ends them)
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name in _KEYWORDS:
            continue
        if p.default is not p.empty and p.default is not None:
            break
        pos.append(p)
    var = any(p.kind == p.VAR_POSITIONAL for p in params)
    return pos, var, f"call{sig}"


def _by_signature(obj: Any, example: Any) -> KerasCall:
    pos, var, text = _signature(obj)
    required = [p for p in pos if p.default is p.empty]
    args = list(example) if isinstance(example, (list, tuple)) else [example]

    def fits(k: int) -> bool:
        return var or len(required) <= k <= len(pos)

    def fail() -> InputError:
        return InputError(
            f"{type(obj).__name__} {getattr(obj, 'name', '')!r} is called as {text}; export_model was given "
            f"{_describe(example)}: give its positional arguments as a tuple ((x, y)), or the one argument's "
            "list or dict")

    if isinstance(example, dict):
        args = [example]
    if not args:
        raise fail()
    if any(_is_structure(a) for a in args):  # structured arguments: passed as they are, flattened
        if not fits(len(args)):
            raise fail()
        return _structured(args, pos)
    if fits(len(args)):
        names = [_param_name(pos, i) for i in range(len(args))]
        return KerasCall(tuple(_tensor(a) for a in args), names, lambda values: tuple(values))
    if len(args) > 1 and pos and len(required) <= 1:  # one argument taking them all, as a list
        base = pos[0].name
        return KerasCall(tuple(_tensor(a) for a in args), [f"{base}_{i}" for i in range(len(args))],
                         lambda values: (list(values),))
    raise fail()


def _param_name(pos: list[inspect.Parameter], i: int) -> str:
    return pos[i].name if i < len(pos) else f"input_{i}"


def _structured(args: list[Any], pos: list[inspect.Parameter]) -> KerasCall:
    """Positional arguments some of which are lists, tuples or dicts: the graph inputs are their
    leaves (dicts in key order), named by a dict's keys or ``<argument>_<index>``."""
    flat: list[tf.Tensor] = []
    names: list[str] = []
    for i, a in enumerate(args):
        base = _param_name(pos, i)
        leaves = tf.nest.flatten(a)
        if isinstance(a, dict) and len(leaves) == len(a):
            names += [str(k) for k in sorted(a)]  # a dict of tensors: the graph inputs take its keys
        elif _is_structure(a):
            names += [f"{base}_{j}" for j in range(len(leaves))]
        else:
            names.append(base)
        flat += [_tensor(x) for x in leaves]
    counts = [len(tf.nest.flatten(a)) for a in args]

    def pack(values: Sequence[Any]) -> tuple[Any, ...]:
        out, at = [], 0
        for a, n in zip(args, counts):
            out.append(tf.nest.pack_sequence_as(a, list(values[at:at + n])))
            at += n
        return tuple(out)

    return KerasCall(tuple(flat), names if len(set(names)) == len(names) else None, pack)
