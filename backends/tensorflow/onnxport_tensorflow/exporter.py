"""TensorFlow / Keras -> ONNX: the concrete function's graph, then one export primitive per TF op.

The flow: the object (a Keras model or layer, a ``tf.function``, a ``tf.Module`` whose
``__call__`` is a ``tf.function``) is traced with ``get_concrete_function`` on input specs built
from the example inputs (dim 0 left unknown unless ``dynamic_shapes`` says otherwise) -> a check
that every TF op has a primitive (one error lists them all) -> a walk of the graph's operations
in order, calling the primitive registered for each op type with a :class:`TFGraph` as ``g`` ->
the layout pass (:func:`onnxport.exporting.passes.transpose.push_transposes`: Transposes pushed through
elementwise ops until pairs cancel) -> the core's export pipeline (:func:`onnxport.exporting.pipeline.finish`:
optimizer, down-adaptation, opset check) -> an ``onnx_ir.Model``.

Variables become initializers named by their Keras weight paths (``dense/kernel``: the root
model's own name is left out) or, for plain ``tf.Variable``\\ s, their names; one variable is one
initializer however often it is read. Keras layers that have a layer primitive (a module export primitive
registered with :func:`onnxport.module_exporter`: LSTM, GRU, SimpleRNN, Bidirectional, BatchNormalization,
LayerNormalization; :mod:`.layers`) are exported whole, from their weights: the
ops their call traced need no primitives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import ConversionError, InputError, UnsupportedOpError
from onnxport.exporting import pipeline as _export
from onnxport.exporting.builder import Builder

from . import dilation as _dilation
from . import layers as _layers
from .export_objects import (  # noqa: F401  (export_support reads them here too)
    _as_tensors,
    _closure_variables,
    _concrete_shapes,
    _input_shapes,
    _is_concrete,
    _is_keras,
    _traceable,
    variable_names,
)
from .keras_inputs import keras_call

#: TF ops the walk handles itself (graph plumbing, no ONNX node).
_PLUMBING = {"Placeholder", "Const", "NoOp", "ReadVariableOp", "Identity", "IdentityN", "StopGradient",
             "PreventGradient", "Snapshot"}

#: nested function calls, inlined by the walk
_CALLS = ("PartitionedCall", "StatefulPartitionedCall")

#: meta key of an initializer stored in an ONNX op's layout (and how to undo it)
_LAYOUT_KEY = "onnxport.tensorflow.layout"

#: the prefix of a layer primitive's target in the traced-targets list (``keras.layers.LSTM``)
LAYER_PREFIX = "keras.layers."

#: graph input / value names: what ONNX and our importers accept
_NAME = re.compile(r"[^A-Za-z0-9_./:-]")


def onnx_dtype(dtype: Any) -> ir.DataType:
    """The ONNX element type of a TF dtype."""
    dt = tf.as_dtype(dtype)
    if dt == tf.bfloat16:
        return ir.DataType.BFLOAT16
    if dt == tf.string:
        return ir.DataType.STRING
    try:
        return ir.DataType.from_numpy(np.dtype(dt.as_numpy_dtype))
    except Exception as exc:
        raise ConversionError(f"TF dtype {dt.name} has no ONNX counterpart") from exc


class TFGraph(Builder):
    """The ``g`` a TensorFlow export primitive receives: the core builder plus TF helpers."""

    def __init__(self, opset: int, *, name: str = "main_graph", parent: TFGraph | None = None,
                 converter: _Converter | None = None):
        super().__init__(opset, name=name, parent=parent)
        self.converter = converter if converter is not None else (parent.converter if parent else None)
        #: the TF operation being converted
        self.tf_op: tf.Operation | None = None

    # -- what the traced op says ----------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        """The current op's attribute ``name`` (bytes decoded), or ``default`` when it has none."""
        fused = self.converter._fused.get(_key(self.tf_op)) if self.converter is not None and self.tf_op else None
        if fused is not None and name in fused[0]:
            return fused[0][name]
        try:
            value = self.tf_op.get_attr(name)
        except (ValueError, AttributeError):
            return default
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list):
            return [v.decode() if isinstance(v, bytes) else v for v in value]
        return value

    def static(self, i: int) -> np.ndarray | None:
        """The value of the current op's ``i``-th input when TF knows it at trace time."""
        return self.converter.static(self.tf_op.inputs[i])

    def static_ints(self, i: int) -> list[int]:
        """The ``i``-th input as a list of ints; an error when it is not known at trace time."""
        value = self.static(i)
        if value is None:
            raise self.error(f"input {i} ({self.tf_op.inputs[i].name}) must be a trace-time constant")
        return [int(v) for v in np.asarray(value).reshape(-1)]

    def out_dtype(self, i: int = 0) -> ir.DataType:
        return onnx_dtype(self.tf_op.outputs[i].dtype)

    def out_shape(self, i: int = 0) -> list[int | None] | None:
        shape = self.tf_op.outputs[i].shape
        return None if shape.rank is None else list(shape.as_list())

    def in_shape(self, i: int) -> list[int | None] | None:
        shape = self.tf_op.inputs[i].shape
        return None if shape.rank is None else list(shape.as_list())

    def error(self, message: str) -> ConversionError:
        """An error naming the current op, its type and the graph."""
        op = self.tf_op
        where = f"{op.type} (op {op.name!r})" if op is not None else "?"
        return ConversionError(f"exporting TF {where}: {message}")

    def branch(self, attr: str, operands: Sequence[ir.Value | None]) -> ir.Graph:
        """The TF function named by the current op's attribute ``attr`` (an If branch) as an ONNX
        subgraph whose inputs are the op's operands after the first (outer values, read directly)."""
        name = self.tf_op.get_attr(attr).name
        fgraph = self.converter.function(self.tf_op, attr)
        return self.converter.run_subgraph(self, fgraph, list(self.tf_op.inputs[1:]), list(operands), name)

    @staticmethod
    def converter_dtype(dtype: Any) -> ir.DataType:
        """The ONNX element type of a TF dtype."""
        return onnx_dtype(dtype)

    def function_graph(self, attr: str) -> Any:
        """The TF function body named by the current op's attribute ``attr``."""
        return self.converter.function(self.tf_op, attr)

    def inline(self, fgraph: Any, operands: Sequence[ir.Value | None], outer: Sequence[tf.Tensor]) -> list[ir.Value]:
        """Convert a TF function body into this graph's nodes, its inputs bound to ``operands``
        (resources: the variables behind ``outer``); returns its outputs."""
        return self.converter.inline(self, fgraph, list(outer), list(operands))

    # -- value helpers (rank, axis, dim_size: the core Builder's) ---------------------------------
    def nchw(self, x: ir.Value, nd: int) -> ir.Value:
        """A channels-last value as channels-first (a Transpose the layout pass may cancel)."""
        return self.op("Transpose", x, perm=[0, nd + 1] + list(range(1, nd + 1)))

    def nhwc(self, x: ir.Value, nd: int) -> ir.Value:
        """A channels-first value as channels-last."""
        return self.op("Transpose", x, perm=[0] + list(range(2, nd + 2)) + [1])

    def weight(self, w: ir.Value, tag: str, numpy_fn: Callable[[np.ndarray], np.ndarray],
               onnx_fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
        """``w`` in the layout an ONNX op wants (a Conv kernel HWIO -> OIHW ...).

        A variable's initializer read here first is stored in that layout (same name, no node);
        a constant gets a converted constant; anything else goes through ``onnx_fn``'s nodes."""
        if w.meta.get(_LAYOUT_KEY) == tag:
            return w
        root = self.parent if self.parent is not None else self
        if root._initializers.get(w.name) is w and not w.uses() and _LAYOUT_KEY not in w.meta:
            arr = np.ascontiguousarray(numpy_fn(w.const_value.numpy()))
            w.const_value = ir.tensor(arr, name=w.name)
            w.shape = ir.Shape(list(arr.shape))
            w.meta[_LAYOUT_KEY] = tag
            return w
        producer = w.producer()
        if producer is not None and producer.op_type == "Constant" and w.const_value is not None:
            return self.const(numpy_fn(w.const_value.numpy()))
        if _LAYOUT_KEY in w.meta:
            raise self.error(f"weight {w.name!r} is read in two layouts ({w.meta[_LAYOUT_KEY]!r} and {tag!r})")
        return onnx_fn(w)


class _Converter:
    """Walks a concrete function's graph and calls the export primitives."""

    def __init__(self, cf: Any, registry: Any, variables: dict[int, tuple[str, Any]],
                 layer_calls: list[_layers.LayerCall]):
        self.cf = cf
        self.graph = cf.graph
        self.registry = registry
        #: id(resource handle) -> (initializer name, variable)
        self.variables = variables
        self.layer_calls = layer_calls
        self.used_targets: set[str] = set()
        #: the layer call a layer primitive is exporting
        self.current_call: _layers.LayerCall | None = None
        self._static: dict[str, np.ndarray | None] = {}
        self._plan: tuple[set[str], dict[str, list[_layers.LayerCall]]] | None = None
        #: (id(graph), resource tensor name) -> (initializer name, variable)
        self._resources: dict[tuple[int, str], tuple[str, Any]] = {}
        #: function name -> its graph (nested calls, loop and branch bodies)
        self._functions: dict[str, Any] = {}
        #: key of a convolution that runs dilated -> (its attributes as the ONNX Conv sees them, the
        #: BatchToSpaceND whose output it computes): SpaceToBatchND -> Conv -> BatchToSpaceND chains
        self._fused: dict[tuple[int, str], tuple[dict[str, Any], tf.Operation]] = {}
        #: op key -> the tensors whose shapes its outputs get (None: element types only)
        self._shape_as: dict[tuple[int, str], Any] = {}
        for external, internal in self.graph.captures:
            hit = variables.get(id(external))
            if hit is not None:
                self._resources[_key(internal)] = hit

    # -- constants and variables -------------------------------------------------------------------
    def variable_of(self, var: Any) -> tuple[str, Any]:
        """``(initializer name, variable)`` of a Keras or TF variable the traced function reads."""
        inner = getattr(var, "value", var) if not isinstance(var, tf.Variable) else var
        handle = getattr(inner, "handle", None)
        hit = self.variables.get(id(handle)) if handle is not None else None
        if hit is None:
            raise ConversionError(f"variable {getattr(var, 'path', var)!r} is not one the exported object holds")
        return hit

    def static(self, t: tf.Tensor) -> np.ndarray | None:
        if t.name not in self._static:
            try:
                value = tf.get_static_value(t)
            except Exception:
                value = None
            self._static[t.name] = None if value is None else np.asarray(value)
        return self._static[t.name]

    def variable_value(self, g: TFGraph, variable: Any) -> ir.Value:
        """The variable's initializer (one per variable). A read of a variable whose initializer
        a primitive stored in another layout is an error (the exporter never mixes them)."""
        name, var = variable
        if id(var) in g._init_keys:
            value = g._init_keys[id(var)]
            if _LAYOUT_KEY in value.meta:
                raise ConversionError(
                    f"variable {name!r} is read both as a {value.meta[_LAYOUT_KEY]} weight and as a plain tensor")
            return value
        arr = var.numpy() if hasattr(var, "numpy") else np.asarray(var)
        return g.initializer(name, ir.Tensor(np.ascontiguousarray(arr), name=name), key=id(var))

    def function(self, op: tf.Operation, attr: str) -> Any:
        """The graph of the TF function an op's attribute ``attr`` names (looked up in the op's
        graph and its outer graphs, then in the eager context: a reloaded SavedModel's library)."""
        name = op.get_attr(attr).name
        hit = self._functions.get(name)
        if hit is not None:
            return hit
        graph = op.graph
        found = None
        while graph is not None and found is None:
            found = graph._get_function(name) if hasattr(graph, "_get_function") else None
            graph = getattr(graph, "outer_graph", None)
        if found is not None:
            fgraph = found.graph
        else:
            from tensorflow.python.eager import context
            from tensorflow.python.framework import function_def_to_graph

            try:
                fdef = context.context().get_function_def(name)
            except Exception as exc:
                raise ConversionError(f"TF op {op.name!r} calls function {name!r}, which is not in the "
                                      "graph's library") from exc
            fgraph = function_def_to_graph.function_def_to_graph(fdef)
        self._functions[name] = fgraph
        return fgraph

    # -- the walk -------------------------------------------------------------------------------
    def run(self, g: TFGraph, input_names: list[str], shapes: list[list[int | str | None]],
            output_names: list[str]) -> None:
        env: dict[str, Any] = {}
        captured = {internal.name: external for external, internal in self.graph.captures}
        placeholders = [t for t in self.graph.inputs if t.name not in captured and t.dtype != tf.resource]
        for name, external in captured.items():  # tensors captured by value (Keras Normalization's mean ...)
            if external.dtype != tf.resource and hasattr(external, "numpy"):
                arr = np.asarray(external.numpy())
                env[name] = lambda gg, a=arr, dt=external.dtype: gg.const(a, onnx_dtype(dt))
        if len(placeholders) != len(shapes):
            raise ConversionError(f"the traced function takes {len(placeholders)} tensor inputs, "
                                  f"{len(shapes)} were given")
        for t, name, shape in zip(placeholders, input_names, shapes):
            env[t.name] = g.input(name, onnx_dtype(t.dtype), shape)
        skip, emit_at = self.plan()
        for op in self.graph.get_operations():
            for call in emit_at.get(op.name, ()):
                self.emit_layer(g, call, env)
            if op.name in skip:
                continue
            self.convert(g, op, env)
        outs = [self.value(g, t, env) for t in self.cf.outputs]
        for value, name in zip(outs, output_names):
            g.output(value, name)

    def run_subgraph(self, g: TFGraph, fgraph: Any, outer: list[tf.Tensor], operands: list[ir.Value | None],
                     name: str) -> ir.Graph:
        """Convert a TF function body into an ONNX subgraph of ``g`` reading outer values."""
        sub = TFGraph(g.opset, name=g.unique_name(name), parent=g)
        if len(fgraph.inputs) < len(outer):
            raise g.error(f"function {name!r} takes {len(fgraph.inputs)} inputs, the op passes {len(outer)}")
        env = self._bind(g, fgraph, outer, operands, f"function {name!r}")
        saved = g.tf_op
        for op in fgraph.get_operations():
            self.convert(sub, op, env)
        g.tf_op = saved
        for t in fgraph.outputs:
            v = self.value(sub, t, env)
            out = sub.output(v)
            if isinstance(v.type, ir.SequenceType):  # a TensorList: the Identity copy keeps its type
                out.type = v.type
            annotate(out, t)
        return sub.graph()

    def _bind(self, g: TFGraph, fgraph: Any, outer: list[tf.Tensor], operands: list[Any], what: str) -> dict[str, Any]:
        """A function body's inputs bound to the op's operands; resource inputs to captured variables."""
        env: dict[str, Any] = {}
        for ph, t, v in zip(fgraph.inputs, outer, operands):
            if t.dtype == tf.resource:
                hit = self._resources.get(_key(t))
                if hit is None:
                    raise g.error(f"{what} reads resource {t.name!r}, which is no captured variable")
                self._resources[_key(ph)] = hit
            else:
                env[ph.name] = v
        return env

    def inline(self, g: TFGraph, fgraph: Any, outer: list[tf.Tensor], operands: list[Any]) -> list[ir.Value]:
        """Convert ``fgraph``'s ops into ``g`` with its inputs bound to ``operands``."""
        if len(fgraph.inputs) != len(outer):
            raise g.error(f"a function takes {len(fgraph.inputs)} inputs, the op passes {len(outer)}")
        env = self._bind(g, fgraph, outer, operands, "a function")
        saved = g.tf_op
        for op in fgraph.get_operations():
            self.convert(g, op, env)
        g.tf_op = saved
        return [self.value(g, t, env) if t.dtype != tf.resource else None for t in fgraph.outputs]

    def value(self, g: TFGraph, t: tf.Tensor, env: dict[str, Any]) -> ir.Value:
        """The IR value of a TF tensor (constants made on first use)."""
        hit = env.get(t.name)
        if isinstance(hit, ir.Value):
            return hit
        if hit is not None:
            return hit(g)
        arr = self.static(t)
        if arr is not None and t.dtype != tf.resource:
            v = g.const(arr, onnx_dtype(t.dtype)) if arr.dtype != object else None
            if v is not None:
                return v
        raise ConversionError(f"TF tensor {t.name!r} has no exported value (made by {t.op.type})")

    def convert(self, g: TFGraph, op: tf.Operation, env: dict[str, Any]) -> None:
        kind = op.type
        if kind in ("NoOp",) or (kind == "Placeholder"):
            return
        if kind == "Const":
            return  # made on first use by value()
        if kind == "ReadVariableOp":
            res = op.inputs[0]
            hit = self._resources.get(_key(res))
            if hit is None:
                raise ConversionError(f"ReadVariableOp {op.name!r} reads {res.name!r}, which is no captured variable")
            env[op.outputs[0].name] = lambda gg, hit=hit: self.variable_value(gg, hit)
            return
        if kind == "SpaceToBatchND" and self.dilated(op) is not None:  # the conv reads the input itself
            conv, attrs, b2s, chain = self.dilated(op)
            src = op.inputs[0]
            env[op.outputs[0].name] = env.get(src.name) or (lambda gg, t=src: self.value(gg, t, env))
            self._fused[_key(conv)] = (attrs, b2s)
            for middle in chain:  # their TF shapes are the blocked ones: the last has the result's
                self._shape_as[_key(middle)] = b2s.outputs if middle is chain[-1] else None
            return
        if kind == "BatchToSpaceND" and self._fused_from(op) is not None:
            src = op.inputs[0]
            env[op.outputs[0].name] = env.get(src.name) or (lambda gg, t=src: self.value(gg, t, env))
            return
        if kind in _CALLS:  # a nested function call: its body inlined, its inputs bound to the operands
            self.used_targets.add(kind)
            ins = [env.get(t.name) if t.dtype == tf.resource else self.value(g, t, env) for t in op.inputs]
            fgraph = self.function(op, "f")
            saved = g.tf_op
            g.tf_op = op
            outs = self.inline(g, fgraph, list(op.inputs), ins)
            g.tf_op = saved
            for t, v in zip(op.outputs, outs):
                if v is not None:
                    annotate(v, t) if v.dtype is None else None
                    env[t.name] = v
            return
        if kind == "IdentityN":  # custom gradients (Keras swish): output i is input i
            for src, out in zip(op.inputs, op.outputs):
                hit = env.get(src.name)
                env[out.name] = hit if hit is not None else (lambda gg, t=src: self.value(gg, t, env))
            return
        if kind in ("Identity", "StopGradient", "PreventGradient", "Snapshot"):
            src = op.inputs[0]
            hit = env.get(src.name)
            env[op.outputs[0].name] = hit if hit is not None else (lambda gg, t=src: self.value(gg, t, env))
            return
        prim = self.registry.find_export("tensorflow", kind)
        if prim is None:
            raise UnsupportedOpError(f"no export primitive for TF op {kind} ({op.name!r})",
                                     [("tensorflow", kind, 0, [op.name])])
        self.used_targets.add(kind)
        g.tf_op = op
        ins = [self.value(g, t, env) if t.dtype != tf.resource else None for t in op.inputs
               if not _control(t)]
        with g.scope(_node_name(op.name), {"tf_op_type": kind}):
            try:
                out = prim.fn(g, *ins)
            except (ConversionError, UnsupportedOpError):
                raise
            except Exception as exc:
                raise g.error(f"{type(exc).__name__}: {exc}") from exc
        key = _key(op)
        if key in self._shape_as:
            self.bind(g, self._shape_as[key] or op.outputs, out, env, names=op.outputs,
                      shaped=self._shape_as[key] is not None)
        else:
            self.bind(g, op.outputs, out, env)

    def dilated(self, s2b: tf.Operation) -> tuple[tf.Operation, dict[str, Any], tf.Operation, list] | None:
        """The dilated convolution ``s2b`` starts (:func:`.dilation.chain`), or None."""
        return _dilation.chain(self, s2b)

    def _in_dilation(self, op: tf.Operation) -> bool:
        return _dilation.inside(self, op)

    def _fused_from(self, b2s: tf.Operation) -> tf.Operation | None:
        return next((b for _, b in self._fused.values() if b is b2s), None)

    def bind(self, g: TFGraph, tensors: Sequence[tf.Tensor], out: Any, env: dict[str, Any],
             names: Sequence[tf.Tensor] | None = None, shaped: bool = True) -> None:
        """Bind a primitive's results to TF tensors (``names``, default ``tensors``), typed and shaped
        as ``tensors`` say."""
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for t, n, v in zip(tensors, names if names is not None else tensors, outs):
            if v is None:
                continue
            if not isinstance(v, ir.Value):
                raise ConversionError(f"the primitive of {t.op.type} returned {type(v).__name__} for {t.name}")
            annotate(v, t, shaped)
            env[n.name] = v

    def emit_layer(self, g: TFGraph, call: _layers.LayerCall, env: dict[str, Any]) -> None:
        target = LAYER_PREFIX + call.kind
        prim = self.registry.find_module_export("tensorflow", type(call.layer))
        self.used_targets.add(target)
        g.tf_op = None
        self.current_call = call
        ins = [self.value(g, t, env) for t in call.inputs]
        with g.scope(call.layer.name, {"keras_layer": type(call.layer).__name__}):
            out = prim.fn(g, call.layer, *ins)
        self.bind(g, call.outputs, out, env)

    def plan(self) -> tuple[set[str], dict[str, list[_layers.LayerCall]]]:
        """The ops not converted and where layer calls are emitted (computed once)."""
        if self._plan is None:
            self._plan = _layers.plan(self.layer_calls, self.graph, list(self.cf.outputs))
        return self._plan

    # -- checks --------------------------------------------------------------------------------------
    def missing(self) -> dict[str, list[str]]:
        """TF op types without a primitive (outside layers exported whole), with op names."""
        skip, _ = self.plan()
        out: dict[str, list[str]] = {}
        seen: set[str] = set()
        stack = [op for op in self.graph.get_operations() if op.name not in skip]
        while stack:
            op = stack.pop(0)
            if op.type in _PLUMBING:
                continue
            if op.type in ("SpaceToBatchND", "BatchToSpaceND") and self._in_dilation(op):
                continue
            if op.type in _CALLS:
                name = op.get_attr("f").name
                if name not in seen:
                    seen.add(name)
                    stack.extend(self.function(op, "f").get_operations())
                continue
            if self.registry.find_export("tensorflow", op.type) is None:
                out.setdefault(op.type, []).append(op.name)
        return out


def _control(t: Any) -> bool:
    return False


def _key(t: tf.Tensor) -> tuple[int, str]:
    """A tensor's key across the graphs of nested functions (names repeat between graphs)."""
    return id(t.graph), t.name


def _node_name(name: str) -> str:
    """TF op names without the ``_1`` suffixes re-entered name scopes get."""
    return re.sub(r"_\d+(?=/)", "", name)


def annotate(value: ir.Value, t: tf.Tensor, shaped: bool = True) -> None:
    """Give a produced value the TF tensor's element type and (``shaped``) static shape."""
    if t.dtype == tf.resource or t.dtype == tf.variant:
        return
    value.dtype = onnx_dtype(t.dtype)
    if not shaped and t.shape.rank is not None:  # the rank only (the dims TF gives do not hold)
        if value.shape is None or len(value.shape) != t.shape.rank:
            value.shape = ir.Shape([None] * t.shape.rank)
        return
    if shaped and t.shape.rank is not None:
        value.shape = ir.Shape(list(t.shape.as_list()))


def export_model(
    obj: Any,
    example_inputs: Any = (),
    *,
    opset: int | None = None,
    dynamic_shapes: Sequence[dict[int, str] | None] | None = None,
    inputs_as_nchw: Sequence[int | str] = (),
    **options: Any,
) -> ir.Model:
    """Export a Keras model or layer, a ``tf.function`` or a ``tf.Module`` to an ONNX IR model.

    :param obj: what to export; Keras models run with ``training=False``.
    :param example_inputs: a tensor (or array) or a tuple of positional inputs; a Keras model with
        several inputs takes them positionally, as one list or as a dict (:mod:`.keras_inputs`).
    :param opset: the default-domain opset (:func:`onnxport.exporting.pipeline.choose_opset`).
    :param dynamic_shapes: per input, a dict from axis to a symbolic dim name (``{0: "batch"}``);
        default: dim 0 of every input is ``batch``. ``()``/``[None, ...]`` for static shapes.
    :param inputs_as_nchw: graph inputs (by position or name) given channels-first: the ONNX
        input is NCHW and transposed to the model's NHWC inside (the Transpose cancels against the
        first Conv's).
    :param options: the core's export options (:class:`onnxport.exporting.pipeline.ExportOptions`):
        ``optimize`` (fold constants, cancel Transposes, drop no-ops; default True),
        ``fold_batchnorm`` (the inference export: BatchNormalization folded into the Conv; off by
        default, so the Keras BN weights keep their names), ``fuse`` (default: only a 2-D MatMul
        plus bias -> Gemm; ``True``: every pattern fusion of :mod:`onnxport.exporting.fusions.patterns`),
        ``input_names`` (default: the Keras Input layers' or the traced
        function's argument names), ``output_names`` (default ``output_0`` ...; dict outputs: keys).
        ``functions=True`` is not supported by this exporter yet.
    """
    from onnxport.plugin.discovery import registry

    opts = _export.ExportOptions.from_kwargs(options)
    if options:
        raise InputError(f"unknown export options: {sorted(options)}")
    if opts.functions:
        raise InputError("functions=True is not supported by the tensorflow exporter yet")
    opset = _export.choose_opset(opset if opset is not None else opts.opset)
    opts.opset = opset
    call = keras_call(obj, example_inputs) if _is_keras(obj) else None  # model(a, b), model([a, b]), dicts
    fn, holder = (call.function(obj), obj) if call is not None else _traceable(obj)
    args = call.flat if call is not None else _as_tensors(example_inputs)
    if call is not None and not obj.built:
        fn(*args)  # variables are made eagerly, not inside the trace
    shapes = _input_shapes(args, dynamic_shapes, ())
    specs = [tf.TensorSpec([d if isinstance(d, int) else None for d in s], a.dtype) for a, s in zip(args, shapes)]
    reg = registry()
    layer_calls: list[_layers.LayerCall] = []
    tf_fn = fn if hasattr(fn, "get_concrete_function") or _is_concrete(fn) else tf.function(fn, autograph=False)
    with _layers.recording(obj, reg, layer_calls):
        try:
            cf = tf_fn if _is_concrete(tf_fn) else tf_fn.get_concrete_function(*specs)
        except Exception as exc:
            if dynamic_shapes is not None or all(d is not None for sp in specs for d in sp.shape):
                raise ConversionError(
                    f"TensorFlow could not trace {type(obj).__qualname__}: {type(exc).__name__}: {exc}") from exc
            # a function with a fixed input signature: its own (static) shapes
            shapes = [list(a.shape.as_list()) for a in args]
            specs = [tf.TensorSpec(a.shape, a.dtype) for a in args]
            layer_calls.clear()
            try:
                cf = tf_fn.get_concrete_function(*specs)
            except Exception as exc2:
                raise ConversionError(
                    f"TensorFlow could not trace {type(obj).__qualname__}: {type(exc2).__name__}: {exc2}") from exc2
    if _is_concrete(tf_fn):  # its own input shapes: the unknown dims symbolic
        shapes = _concrete_shapes(cf, args, shapes)
    variables = variable_names(holder, fn)
    _closure_variables(cf, variables)
    conv = _Converter(cf, reg, variables, layer_calls)
    missing = conv.missing()
    if missing:
        lines = [f"  {kind}: {', '.join(names[:3])}" + (" ..." if len(names) > 3 else "")
                 for kind, names in sorted(missing.items())]
        raise UnsupportedOpError(
            f"no tensorflow export primitive for {len(missing)} op(s) of this model:\n" + "\n".join(lines),
            [("tensorflow", kind, 0, names) for kind, names in sorted(missing.items())],
        )
    names = _arg_names(cf, len(args), call.names if call is not None else None)
    outs = _output_names(cf)
    nchw = _nchw_positions(inputs_as_nchw, names)
    onnx_shapes = [(_to_nchw(s) if i in nchw else s) for i, s in enumerate(shapes)]
    gname = getattr(obj, "name", None) if not _is_concrete(obj) else None
    g = TFGraph(opset, name=_NAME.sub("_", gname if isinstance(gname, str) and gname else type(obj).__name__),
                converter=conv)
    if nchw:
        _run_nchw(conv, g, names, onnx_shapes, outs, nchw)
    else:
        conv.run(g, names, onnx_shapes, outs)
    model = g.model(producer="onnxport-tensorflow")
    if opts.optimize:  # the layout pass first, on a folded graph; the core pipeline does the rest
        from onnxport.exporting.passes.optimize import optimize as _optimize
        from onnxport.exporting.passes.transpose import push_transposes

        _optimize(model)
        push_transposes(model)
    # Keras layers are ONNX ops already: of the pattern fusions only MatMul + bias -> Gemm applies;
    # constants are initializers (as other TF -> ONNX converters write them), not nodes
    return _export.finish(model, opts, backend="tensorflow", targets=conv.used_targets, fuse_default=("Gemm",),
                          constant_initializers=True)


def _arg_names(cf: Any, n: int, given: list[str] | None = None) -> list[str]:
    """The graph input names: ``given`` (a Keras call's input names) when they are distinct, else
    the traced function's argument names."""
    if given is not None and len(given) == n:
        names = [_NAME.sub("_", name) or f"input_{i}" for i, name in enumerate(given)]
        if len(set(names)) == n:
            return names
    names = []
    for t in cf.graph.inputs[:n]:
        base = _NAME.sub("_", t.name.split(":")[0])
        names.append(base if base and not re.fullmatch(r"a_\d+", base) else f"input_{len(names)}")
    return names


def _output_names(cf: Any) -> list[str]:
    structured = cf.structured_outputs
    if isinstance(structured, dict) and len(structured) == len(cf.outputs):
        return [_NAME.sub("_", str(k)) for k in tf.nest.flatten(list(structured.keys()))]
    return ["output_0"] if len(cf.outputs) == 1 else [f"output_{i}" for i in range(len(cf.outputs))]


def _nchw_positions(which: Sequence[int | str], names: list[str]) -> set[int]:
    out = set()
    for w in which:
        if isinstance(w, str):
            if w not in names:
                raise InputError(f"inputs_as_nchw names {w!r}, which is not an input ({names})")
            out.add(names.index(w))
        else:
            out.add(int(w))
    return out


def _to_nchw(shape: list[Any]) -> list[Any]:
    if len(shape) < 3:
        raise InputError(f"inputs_as_nchw needs inputs of rank 3 or more, got shape {shape}")
    return [shape[0], shape[-1], *shape[1:-1]]


def _run_nchw(conv: _Converter, g: TFGraph, names: list[str], shapes: list[list[Any]],
              outs: list[str], nchw: set[int]) -> None:
    """The walk with the chosen inputs given channels-first and transposed to NHWC inside."""
    real_input = g.input
    count = [0]

    def input_hook(name: str, dtype: ir.DataType, shape: Any) -> ir.Value:
        i = count[0]
        count[0] += 1
        v = real_input(name, dtype, shape)
        if i not in nchw:
            return v
        nd = len(shape) - 2
        t = g.nhwc(v, nd)
        t.dtype = dtype
        t.shape = ir.Shape([shape[0], *shape[2:], shape[1]])
        return t

    g.input = input_hook  # type: ignore[method-assign]
    try:
        conv.run(g, names, shapes, outs)
    finally:
        del g.input


def run_sample(fn: Any, args: tuple[Any, ...], **options: Any) -> ir.Model:
    """Export a sample's callable."""
    return export_model(fn, args, **options)
