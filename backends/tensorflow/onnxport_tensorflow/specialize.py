"""Calling a model whose settings (axes, pads, split sizes, Resize sizes ...) arrive as graph inputs.

Some primitives need a value when the graph is traced (TensorFlow takes it only as a Python
value, or the output shape depends on it). When such a value is computed from graph inputs, the
model's one ``tf.function`` cannot trace: ``model(*inputs)`` then reads the concrete values of
the graph inputs the value is computed from (found by walking the graph back from the node that
asked) and runs a ``tf.function`` specialised on them: those inputs are static numpy values in
its trace, the others its arguments, traced for their shapes. One specialised function is kept
per distinct tuple of values (a new value or shape traces again, as ``jax.jit`` does); see
:class:`Specializer`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import InputError

from .context import DataDependentError

#: the specialised functions kept per model (least recently used dropped first)
MAX_SPECIALIZATIONS = 64


class SettingInputError(InputError):
    """An input that sets a value TensorFlow needs at trace time (axes, split sizes ...) is
    symbolic: the model was called inside a ``tf.function`` with a traced value for it."""

    # autograph re-raises an error from a user's tf.function as its own type only when the type
    # takes the message alone (Exception's constructor): else it becomes a StagingError
    __init__ = Exception.__init__


def needed_values(step_inputs: list[ir.Value | None], args: list[Any], value: Any) -> list[ir.Value]:
    """The node inputs a :class:`DataDependentError` asked about: the one whose argument is
    ``value`` when the primitive named it, else every input that is not static."""
    from .context import is_static

    if value is not None:
        hit = [v for v, a in zip(step_inputs, args) if v is not None and a is value]
        if hit:
            return hit
    return [v for v, a in zip(step_inputs, args) if v is not None and not is_static(a)]


def _subgraph_owners(graph: ir.Graph) -> dict[ir.Value, ir.Node]:
    """Each subgraph input (a Loop's iteration number, a Scan slice ...) -> the node owning it."""
    owners: dict[ir.Value, ir.Node] = {}
    for node in ir.traversal.RecursiveGraphIterator(graph):
        for attr in node.attributes.values():
            subs = attr.value if attr.type == ir.AttributeType.GRAPHS else (
                [attr.value] if attr.type == ir.AttributeType.GRAPH else [])
            for sub in subs:
                for v in sub.inputs:
                    owners[v] = node
    return owners


def _subgraph_reads(node: ir.Node) -> list[ir.Value]:
    """The values the nodes of ``node``'s subgraphs read (outer-scope values among them)."""
    out: list[ir.Value] = []
    for attr in node.attributes.values():
        subs = attr.value if attr.type == ir.AttributeType.GRAPHS else (
            [attr.value] if attr.type == ir.AttributeType.GRAPH else [])
        for sub in subs:
            for inner in ir.traversal.RecursiveGraphIterator(sub):
                out.extend(v for v in inner.inputs if v is not None)
    return out


def input_ancestors(graph: ir.Graph, values: list[ir.Value]) -> set[int]:
    """The positions of the graph inputs that ``values`` are computed from."""
    index = {v: i for i, v in enumerate(graph.inputs)}
    owners: dict[ir.Value, ir.Node] | None = None
    found: set[int] = set()
    seen: set[ir.Value] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if v is None or v in seen:
            continue
        seen.add(v)
        if v in index:
            found.add(index[v])
            continue
        node = v.producer()
        if node is None:
            if owners is None:
                owners = _subgraph_owners(graph)
            node = owners.get(v)
            if node is None:
                continue  # an initializer
        stack.extend(x for x in node.inputs if x is not None)
        stack.extend(_subgraph_reads(node))
    return found


def _static_value(x: Any) -> np.ndarray | None:
    """The concrete value of a checked input (eager tensor, or a constant in a user's trace)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x)
    if isinstance(x, tf.Tensor) and not isinstance(x, tf.Variable):
        try:
            return tf.get_static_value(x)
        except (TypeError, ValueError):
            return None
    return None


class Specializer:
    """The ``tf.function``\\ s of one model specialised on the values of some of its inputs.

    ``call(values)`` runs ``serve`` until a trace needs a value computed from graph inputs; from
    then on it fixes those inputs (and any more that a later trace asks for) to the values given
    in each call, keyed by their dtypes, shapes and bytes.
    """

    def __init__(self, graph: ir.Graph, specs: list[dict[str, Any]], forward: Callable[..., Any],
                 serve: Callable[[], Any], stats_key: Callable[[], Any]):
        self._graph = graph
        self._specs = specs
        self._forward = forward
        self._serve = serve
        self._stats_key = stats_key
        self.static: tuple[int, ...] = ()  # the positions of the inputs fixed per call
        self._cause: dict[int, str] = {}  # input position -> what asked for it (error messages)
        self._functions: OrderedDict[tuple, Any] = OrderedDict()

    def reset(self) -> None:
        """Forget the specialised functions (the model was retraced: train/eval)."""
        self._functions.clear()

    def call(self, values: list[Any]) -> Any:
        if not self.static:
            try:
                return self._serve()(*values)
            except DataDependentError as exc:
                self._widen(exc)
        while True:
            try:
                return self._call_fixed(values)
            except DataDependentError as exc:
                self._widen(exc)

    def _widen(self, exc: DataDependentError) -> None:
        """Add the inputs ``exc`` depends on to :attr:`static`; re-raise it if there are none new."""
        needs = list(exc.needs or [])
        found = input_ancestors(self._graph, needs) if needs else set()
        new = {i for i in found if i not in self.static and self._fixable(i)}
        if not new:  # not traced back to an input: every integer/bool input, as a last resort
            new = {i for i, spec in enumerate(self._specs) if i not in self.static and self._fixable(i)
                   and spec["np_dtype"] is not None and np.dtype(spec["np_dtype"]).kind in "iub"}
        if not new:
            raise exc
        for i in new:
            self._cause[i] = str(exc)
        self.static = tuple(sorted({*self.static, *new}))
        self._functions.clear()

    def _fixable(self, i: int) -> bool:
        spec = self._specs[i]
        return spec["kind"] == "tensor" and spec["np_dtype"] is not None and np.dtype(spec["np_dtype"]).kind != "O"

    def _call_fixed(self, values: list[Any]) -> Any:
        fixed: dict[int, np.ndarray] = {}
        for i in self.static:
            arr = _static_value(values[i])
            if arr is None:
                spec = self._specs[i]
                raise SettingInputError(
                    f"input {spec['name']!r} must be a concrete value when the model is traced: it sets "
                    f"what TensorFlow needs at trace time ({self._cause.get(i, 'a shape or axis')[:300]}). "
                    "Call the model eagerly, or pass a constant (numpy array or eager tensor) for it "
                    "inside your tf.function")
            np_dtype = self._specs[i]["np_dtype"]
            if np_dtype is not None and arr.dtype != np_dtype:
                arr = arr.astype(np_dtype)  # a carried narrow type back to its ONNX dtype (exact)
            fixed[i] = arr
        key = tuple((i, a.dtype.str, a.shape, a.tobytes()) for i, a in fixed.items())
        fn = self._functions.get(key)
        if fn is None:
            fn = self._function(fixed)
            self._functions[key] = fn
            while len(self._functions) > MAX_SPECIALIZATIONS:
                self._functions.popitem(last=False)
        else:
            self._functions.move_to_end(key)
        return fn(*[x for i, x in enumerate(values) if i not in fixed])

    def _function(self, fixed: dict[int, np.ndarray]) -> Any:
        n = len(self._specs)
        forward = self._forward

        def specialised(*rest: Any) -> Any:
            it = iter(rest)
            return forward(*[fixed[i] if i in fixed else next(it) for i in range(n)])

        # traced for the shapes of the inputs given (no signature with symbolic dims): what the
        # fixed settings decide (a Resize's output size) often needs the other dims too, as the
        # values would in an eager run; a new shape traces again, as jax.jit does
        fn = tf.function(specialised, autograph=False)
        if hasattr(fn, "_key_for_call_stats"):
            fn._key_for_call_stats = self._stats_key()  # one trace each: no retracing warnings
        return fn

