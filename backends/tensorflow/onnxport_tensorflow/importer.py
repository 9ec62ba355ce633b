"""ONNX IR -> a ``tf.Module`` whose ``__call__`` is a ``tf.function`` over ``tf.Variable`` weights.

The importer resolves every node to its primitive once; the traced function then walks the graph
in topological order, calling one primitive per node. Values computed only from static shapes
and constants stay numpy (folded at import time, or eagerly at trace time under
``tf.init_scope``), so the traced graph holds only the work that depends on inputs and weights.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.backend import Backend
from onnxport.driver import NO_FOLD_OPS, RANDOM_OPS, ImportPlan, is_weight_use, iter_graphs
from onnxport.errors import ConversionError, InputError, OnnxportError
from onnxport.inputs import bind_inputs, check_shape
from onnxport.safety import GROWING_OPS, check_call, fold_fits

from . import dtypes, layout
from .context import CALL, CallState, DataDependentError, Mode, NodeContext, is_static

_FOLD_LIMIT = 1 << 26  # elements; larger folded constants stay runtime computations
#: folded constants of at least this many elements read at run time are held in non-trainable
#: variables (``model.constants``) instead of being embedded in every traced graph
_HOIST_MIN = 1 << 12
_UNTRAINABLE_FLOATS = ("float8", "float4", "float6")


# -- values --------------------------------------------------------------------------------
class _Env:
    """Values of one graph run; lookups fall through to the enclosing graph's run."""

    __slots__ = ("vals", "parent")

    def __init__(self, parent: _Env | dict | None = None):
        self.vals: dict[ir.Value, Any] = {}
        self.parent = parent

    def __getitem__(self, v: ir.Value) -> Any:
        env: Any = self
        while isinstance(env, _Env):
            if v in env.vals:
                return env.vals[v]
            env = env.parent
        if env is not None and v in env:
            return env[v]
        raise ConversionError(f"value {v.name!r} is used before it is computed")

    def __setitem__(self, v: ir.Value, x: Any) -> None:
        self.vals[v] = x


def to_numpy(x: Any) -> Any:
    """A concrete value (eager tensor, numpy, list of them) as numpy; strings as ``str`` objects."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [to_numpy(e) for e in x]
    if isinstance(x, (tf.Tensor, tf.Variable)):
        arr = np.asarray(x.numpy())
        if x.dtype == tf.string:
            arr = np.asarray(arr, dtype=object)
            return np.vectorize(_decode, otypes=[object])(arr) if arr.size else arr
        return arr
    return np.asarray(x)


def _decode(b: Any) -> Any:
    return b.decode("utf-8") if isinstance(b, bytes) else b


def _is_concrete(x: Any) -> bool:
    if x is None or isinstance(x, (np.ndarray, np.generic)):
        return True
    if isinstance(x, (list, tuple)):
        return all(_is_concrete(e) for e in x)
    return isinstance(x, tf.Tensor) and not isinstance(x, tf.Variable) and hasattr(x, "_numpy")


def _to_static(x: Any) -> Any:
    """A concrete result as numpy (strings as numpy ``object`` arrays of ``bytes``)."""
    if x is None or isinstance(x, (np.ndarray, np.generic)):
        return x
    if isinstance(x, (list, tuple)):
        return [_to_static(e) for e in x]
    return x.numpy()


def _size(x: Any) -> int:
    if isinstance(x, (list, tuple)):
        return sum(_size(e) for e in x)
    return int(np.size(x)) if x is not None else 0


# -- compiled graphs -------------------------------------------------------------------------
class _Step:
    """One node: its primitive with context, attributes and compiled subgraphs bound."""

    __slots__ = ("node", "fn", "ctx", "attrs", "subgraphs", "foldable", "inputs", "outputs", "convert", "scope")

    def __init__(self, node: ir.Node, fn: Callable, ctx: NodeContext, attrs: dict[str, Any],
                 subgraphs: list[tuple[str, list[Program], bool]], foldable: bool):
        self.node = node
        self.fn = fn
        self.ctx = ctx
        self.attrs = attrs
        self.subgraphs = subgraphs
        self.foldable = foldable
        self.inputs = list(node.inputs)
        self.outputs = list(node.outputs)
        self.convert: tuple[str | None, ...] | None = None  # per input, set by layout.plan
        self.scope = "node"  # the TF name scope of its ops (unique per graph, set by the builder)

    def call(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        if self.ctx.op_type in GROWING_OPS:  # sized before allocating, where the values are concrete
            check_call(self.ctx.op_type, self.ctx.label, args, lambda a: a.shape, lambda a: a.numpy() if hasattr(a, "numpy") else np.asarray(a))
        try:
            with tf.name_scope(self.scope):  # run-time TF errors name the op by this scope
                result = self.fn(self.ctx, *args, **attrs)
        except OnnxportError:
            raise
        except Exception as exc:
            raise ConversionError(
                f"node {self.ctx.label} (opset {self.ctx.opset}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        if len(self.outputs) == 1:
            return [result]
        result = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(result) < len(self.outputs):
            result += [None] * (len(self.outputs) - len(result))
        return result

    def run(self, env: _Env) -> None:
        args = [env[v] if v is not None else None for v in self.inputs]
        if self.convert is not None:
            args = [layout.convert(a, how) for a, how in zip(args, self.convert)]
        attrs = self.attrs
        if self.subgraphs:
            attrs = dict(attrs)
            for name, progs, is_list in self.subgraphs:
                bodies = [Body(p, env) for p in progs]
                attrs[name] = bodies if is_list else bodies[0]
        if self.foldable and all(is_static(a) for a in args):
            # computed from static shapes/constants: evaluate eagerly now, keep it numpy
            with tf.init_scope():
                outs = self.call(args, attrs)
                outs = [_to_static(o) if _is_concrete(o) else o for o in outs]
        else:
            outs = self.call(args, attrs)
        for v, o in zip(self.outputs, outs):
            env[v] = o


class Program:
    """A compiled ONNX graph: formal inputs, steps in topological order, outputs."""

    def __init__(self, graph: ir.Graph, steps: list[_Step], inputs: list[ir.Value]):
        self.graph = graph
        self.name = graph.name or "graph"
        self.steps = steps
        self.inputs = inputs
        self.outputs = list(graph.outputs)
        self.convert_out: list[str | None] | None = None  # set by layout.plan
        self.hwio: set[ir.Value] = set()  # weights that Convs read HWIO (layout.plan)

    def run(self, env: _Env) -> list[Any]:
        for step in self.steps:
            step.run(env)
        if self.convert_out is None:
            return [env[v] for v in self.outputs]
        return [layout.convert(env[v], how) for v, how in zip(self.outputs, self.convert_out)]


class Body:
    """A subgraph (If branch, Loop/Scan body) bound to its enclosing values.

    ``body(*inputs) -> list of outputs``; it can be called inside ``tf.cond``/``tf.while_loop``
    (outer values are closed over).
    """

    def __init__(self, program: Program, outer: _Env):
        self.program = program
        self.outer = outer

    @property
    def num_inputs(self) -> int:
        return len(self.program.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.program.outputs)

    @property
    def input_dtypes(self) -> list[ir.DataType | None]:
        return [v.dtype for v in self.program.inputs]

    @property
    def output_dtypes(self) -> list[ir.DataType | None]:
        return [v.dtype for v in self.program.outputs]

    @property
    def input_shapes(self) -> list[tuple | None]:
        from onnxport.context import value_shape as _shape

        return [_shape(v) for v in self.program.inputs]

    @property
    def output_shapes(self) -> list[tuple | None]:
        from onnxport.context import value_shape as _shape

        return [_shape(v) for v in self.program.outputs]

    def __call__(self, *inputs: Any) -> list[Any]:
        if len(inputs) != self.num_inputs:
            raise ConversionError(
                f"subgraph {self.program.name!r} takes {self.num_inputs} inputs, got {len(inputs)}"
            )
        env = _Env(self.outer)
        for v, x in zip(self.program.inputs, inputs):
            env[v] = x
        return self.program.run(env)


# -- the model --------------------------------------------------------------------------------
def _to_tensor(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_to_tensor(e) for e in x]
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind in "OSU":
            from .ops.import_._static import string_tensor

            return string_tensor(x)
        return tf.constant(dtypes.to_carrier_array(np.asarray(x)))
    return x


class TfModel(tf.Module):
    """An imported ONNX model: a ``tf.Module`` with ``tf.Variable`` weights.

    ``model(*inputs)`` / ``model(name=value)`` runs the graph through ``model.serve``, a
    ``tf.function`` with an input signature read from the graph inputs (symbolic dims are
    ``None``): one output comes back as a tensor, several as a tuple. :attr:`weights` maps
    initializer names to variables: trainable float weights (a shared initializer is one
    variable) and large non-trainable constants. ``tf.saved_model.save(model, path)`` writes a
    SavedModel whose loaded object is called the same way (positionally).
    """

    #: folded constants keyed by graph values: no variables, and tf.Module's walk over attributes
    #: (``trainable_variables``) cannot handle their non-string keys
    _TF_MODULE_IGNORED_PROPERTIES = tf.Module._TF_MODULE_IGNORED_PROPERTIES | frozenset({"_static"})

    def __init__(self, program: Program, variables: dict[str, tf.Variable], var_values: dict[str, ir.Value],
                 static: dict[ir.Value, Any], info: dict[str, Any], mode: Mode, random: bool,
                 seed: int | None, name: str | None = None):
        super().__init__(name=name or "onnx_model")
        self._impl = _Internals(program, var_values, static, info)
        self.weights: dict[str, tf.Variable] = variables
        self._mode = mode
        self._random = random
        self._seed = seed
        self._rebuild()

    # -- facts --------------------------------------------------------------------------
    @property
    def input_names(self) -> list[str]:
        return [i["name"] for i in self._impl.info["inputs"]]

    @property
    def output_names(self) -> list[str]:
        return list(self._impl.info["outputs"])

    @property
    def input_signature(self) -> list[tf.TensorSpec] | None:
        """The ``tf.TensorSpec`` of every graph input (None when an input is not a tensor)."""
        specs = []
        for spec in self._impl.info["inputs"]:
            if spec["kind"] != "tensor" or spec["tf_dtype"] is None:
                return None
            shape = None if spec["shape"] is None else [d if isinstance(d, int) else None for d in spec["shape"]]
            specs.append(tf.TensorSpec(shape, spec["tf_dtype"], name=_spec_name(spec["name"])))
        return specs

    @property
    def training(self) -> bool:
        return self._mode.training

    @property
    def has_random_ops(self) -> bool:
        """Whether the graph holds Dropout or random ops."""
        return self._random

    def train(self, mode: bool = True) -> TfModel:
        """Training behaviour: Dropout drops, BatchNormalization normalizes with batch statistics
        and updates the running-statistics variables. Retraces :attr:`serve`."""
        if bool(mode) != self._mode.training:
            self._mode.training = bool(mode)
            self._rebuild()
        return self

    def eval(self) -> TfModel:
        """Inference behaviour (the default after import)."""
        return self.train(False)

    def _rebuild(self) -> None:
        sig = self.input_signature
        # autograph off: the graph walk is plain Python that must run once per trace, unconverted.
        # The one tracked tf.function is the instance's ``__call__``: tf.saved_model.save makes
        # it the default serving signature, and the loaded object is called through it.
        if sig is None:
            fn = tf.function(self.forward, reduce_retracing=True, autograph=False)
        else:
            fn = tf.function(self.forward, input_signature=sig, autograph=False)
        self.__call__ = fn

    @property
    def serve(self) -> Any:
        """The model's ``tf.function`` (input signature from the graph inputs; no input checks)."""
        return self.__dict__["__call__"]

    # -- running ------------------------------------------------------------------------
    def __call__(self, *inputs: Any, **named: Any) -> Any:
        """Check the inputs (dtypes and static dims, no implicit casts), then run :attr:`serve`."""
        values = self._bind_inputs(inputs, named)
        values = [self._check_input(spec, x) for spec, x in zip(self._impl.info["inputs"], values)]
        try:
            return self.serve(*values)
        except tf.errors.OpError as exc:  # shapes only the run reveals: name the ONNX node
            raise _run_error(self._impl.program, exc) from exc

    @tf.autograph.experimental.do_not_convert
    def forward(self, *inputs: Any) -> Any:
        """The graph on tensors, as a plain Python function (trace it, or call it eagerly)."""
        if len(inputs) != len(self._impl.program.inputs):
            raise InputError(f"the model takes {len(self._impl.program.inputs)} input(s), got {len(inputs)}")
        state = CallState(self._seed, self.weights)
        token = CALL.set(state)
        try:
            env = _Env(self._impl.static)
            for key, v in self._impl.var_values.items():
                var = self.weights[key]
                env[v] = layout.lay_out(var) if v in self._impl.program.hwio else var.read_value()
            for v, x in zip(self._impl.program.inputs, inputs):
                env[v] = x
            outs = [_to_tensor(o) for o in self._impl.program.run(env)]
        finally:
            CALL.reset(token)
        if state.updates:
            deps = [var.assign(val) for var, val in state.updates]
            with tf.control_dependencies(deps):
                outs = [tf.identity(o) if isinstance(o, tf.Tensor) else o for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def keras_layer(self) -> Any:
        """A Keras 3 layer running this model; its ``trainable_variables`` are this model's."""
        from .keras import OnnxLayer

        return OnnxLayer(self)

    def _bind_inputs(self, args: tuple, kwargs: dict) -> list[Any]:
        return bind_inputs(self.input_names, args, kwargs)

    def _check_input(self, spec: dict[str, Any], x: Any) -> Any:
        name = spec["name"]
        if spec["kind"] != "tensor":
            return _to_tensor(x)
        want = spec["tf_dtype"]
        if isinstance(x, (np.ndarray, np.generic)):
            ok = want is None or (spec["np_dtype"] is not None and x.dtype == spec["np_dtype"]) or (
                (x.dtype.kind in "OSU" or _np_ok(x.dtype)) and dtypes.tf_from_numpy(x.dtype) == want
                and spec["np_dtype"] is not None and spec["np_dtype"] not in _NARROW_NP)
            if not ok:
                raise InputError(f"input {name!r} must have dtype {spec['np_dtype'] or want.name}, got {x.dtype} "
                                 "(no implicit casts)")
            x = _to_tensor(x)
        elif isinstance(x, (tf.Tensor, tf.Variable)):
            if want is not None and x.dtype != want:
                raise InputError(f"input {name!r} must have dtype {want.name}, got {x.dtype.name} (no implicit casts)")
        else:
            raise InputError(f"input {name!r} must be a tf.Tensor or numpy array, got {type(x).__name__}")
        if spec["shape"] is not None:
            check_shape(name, spec["shape"], tuple(x.shape))
        return x

    def __repr__(self) -> str:
        n = sum(int(np.prod(v.shape)) for v in self.weights.values() if v.trainable)
        return (f"TfModel(inputs={self.input_names}, outputs={self.output_names}, "
                f"trainable={len(self.trainable_variables)} variables / {n} values)")


_NARROW_NP = frozenset(np.dtype(dtypes.to_numpy_dtype(t)) for t in dtypes.CARRIERS)


class _Internals:
    """The compiled graph and its import-time facts, kept out of ``tf.Module``'s tracking (it
    walks attributes for variables and cannot hold ``ir.Value`` keys)."""

    __slots__ = ("program", "var_values", "static", "info")

    def __init__(self, program: Program, var_values: dict[str, ir.Value], static: dict[ir.Value, Any],
                 info: dict[str, Any]):
        self.program = program
        self.var_values = var_values
        self.static = static
        self.info = info


def _np_ok(dt: np.dtype) -> bool:
    try:
        dtypes.tf_from_numpy(dt)
        return True
    except ConversionError:
        return False


def _spec_name(name: str) -> str:
    import re

    s = re.sub(r"[^A-Za-z0-9_.\-/]", "_", name or "input")
    return s if re.match(r"[A-Za-z0-9.]", s) else "x" + s


# -- building -----------------------------------------------------------------------------------
class _Builder:
    """Resolves primitives, folds constant subgraphs and picks variables for one import."""

    def __init__(self, plan: ImportPlan, options: dict[str, Any]):
        self.plan = plan
        self.options = options
        self.mode = Mode()
        self.static: dict[ir.Value, Any] = {}
        self.params: dict[str, np.ndarray] = {}
        self.param_values: dict[str, ir.Value] = {}
        self.param_key_of: dict[ir.Value, str] = {}
        self.trainable_mode = options.get("trainable", "auto")
        self.node_count = 0
        self.random = False

    def collect_initializers(self) -> None:
        for g in iter_graphs(self.plan.model.graph):
            for v in g.initializers.values():
                if v.const_value is None:
                    continue
                try:
                    arr = dtypes.array_from_ir(v.const_value)
                except OnnxportError as exc:
                    raise ConversionError(f"initializer {v.name!r}: {exc}") from exc
                if self._is_param(v, arr):
                    key = v.name or f"param_{len(self.params)}"
                    self.param_values[key] = v
                    self.param_key_of[v] = key
                    self.params[key] = arr
                else:
                    self.static[v] = arr

    def _is_param(self, v: ir.Value, arr: np.ndarray) -> bool:
        if arr.dtype.kind != "f" and arr.dtype.name != "bfloat16":
            return False
        if arr.dtype.name.startswith(_UNTRAINABLE_FLOATS):
            return False
        if self.trainable_mode == "none":
            return False
        if self.trainable_mode == "all":
            return True
        return arr.ndim >= 1 and is_weight_use(v)

    def compile(self, graph: ir.Graph) -> Program:
        steps = []
        for node in graph:
            step = self._node(node)
            if step is not None:
                steps.append(step)
        return Program(graph, steps, list(graph.inputs))

    def _foldable(self, node: ir.Node) -> bool:
        if node.op_type in NO_FOLD_OPS:
            return False
        return not any(
            a.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS) for a in node.attributes.values()
        )

    def _node(self, node: ir.Node) -> _Step | None:
        info = self.plan.info(node)
        consts = {
            i: v_arr for i, v in enumerate(node.inputs)
            if v is not None and (v_arr := self.static.get(v)) is not None and isinstance(v_arr, np.ndarray)
        }
        param_keys = {i: self.param_key_of[v] for i, v in enumerate(node.inputs) if v in self.param_key_of}
        self.node_count += 1
        self.random |= node.op_type in RANDOM_OPS
        ctx = NodeContext(node, info.opset, info.version, self.mode, consts, self.node_count, param_keys)
        subgraphs: list[tuple[str, list[Program], bool]] = []
        for name, attr in node.attributes.items():
            if attr.type == ir.AttributeType.GRAPH:
                subgraphs.append((name, [self.compile(attr.value)], False))
            elif attr.type == ir.AttributeType.GRAPHS:
                subgraphs.append((name, [self.compile(g) for g in attr.value], True))
        step = _Step(node, info.primitive.fn, ctx, dict(info.attributes), subgraphs, self._foldable(node))
        step.scope = f"n{self.node_count}_{_scope_part(node.name or node.op_type)}"
        if (step.foldable and all(v is None or v in self.static for v in node.inputs)
                and fold_fits(node.op_type, [None if v is None else self.static[v] for v in node.inputs],
                              np.shape, np.asarray, _FOLD_LIMIT)):
            env = _Env(self.static)
            try:
                step.run(env)
            except DataDependentError:
                return step
            outs = [env.vals.get(v) for v in node.outputs]
            if all(o is None or (is_static(o) and _size(o) <= _FOLD_LIMIT) for o in outs):
                for v, o in zip(node.outputs, outs):
                    if o is not None or v in env.vals:  # None is a value too: an empty optional
                        self.static[v] = o
                return None
        return step

    def hoist(self, program: Program) -> dict[str, ir.Value]:
        """Large folded constants read by runtime steps: ``{key: value}``."""
        values: dict[str, ir.Value] = {}
        seen: set[ir.Value] = set()
        for step in _iter_steps(program):
            for v in step.inputs:
                if v is None or v in seen or v in self.param_key_of:
                    continue
                arr = self.static.get(v)
                if not isinstance(arr, np.ndarray) or arr.size < _HOIST_MIN or not _np_ok(arr.dtype):
                    continue
                if arr.dtype.kind not in "fiub":
                    continue
                seen.add(v)
                key = v.name or f"const_{len(values)}"
                while key in values or key in self.param_values:
                    key += "_"
                values[key] = v
        return values


def _run_error(program: Program, exc: Any) -> ConversionError:
    """A TF run-time error as a :class:`ConversionError` naming the ONNX node whose op failed."""
    import re

    scopes = {step.scope: step.ctx.label for step in _iter_steps(program)}
    found = re.search(r"\{\{node ([^}]+)\}\}", exc.message or "")
    label = None
    for part in (found.group(1).split("/") if found else []):
        label = scopes.get(part) or scopes.get(re.sub(r"_\d+$", "", part))
        if label:
            break
    where = f"node {label}" if label else "the model"
    first = (exc.message or "").strip().splitlines()[0] if exc.message else ""
    return ConversionError(f"{where} failed at run time: {type(exc).__name__}: {first}")


def _iter_steps(program: Program) -> Iterator[_Step]:
    for step in program.steps:
        yield step
        for _, progs, _ in step.subgraphs:
            for p in progs:
                yield from _iter_steps(p)


def _scope_part(name: str) -> str:
    """A TF name-scope piece from an ONNX node name (names come from the file: sanitised)."""
    import re

    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:48] or "node"


def _input_spec(v: ir.Value) -> dict[str, Any]:
    kind = "tensor"
    if v.type is not None and not isinstance(v.type, ir.TensorType):
        kind = "other"
    tf_dtype = np_dtype = None
    if kind == "tensor" and v.dtype is not None and dtypes.has_tf_dtype(v.dtype):
        tf_dtype = dtypes.to_tf_dtype(v.dtype)
        np_dtype = dtypes.to_numpy_dtype(v.dtype)
    shape = None
    if kind == "tensor" and v.shape is not None:
        shape = tuple(d if isinstance(d, int) else (getattr(d, "value", None) or None) for d in v.shape)
    return {"name": v.name, "kind": kind, "tf_dtype": tf_dtype, "np_dtype": np_dtype, "shape": shape}


def _var_name(key: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.\-/]", "_", key) or "weight"


def import_plan(plan: ImportPlan, **options: Any) -> TfModel:
    """Build the :class:`TfModel` for a prepared plan.

    Options: ``trainable="auto"|"all"|"none"`` (which float initializers become trainable
    variables), ``training=False``, ``seed=None`` (seeds ops without a ``seed`` attribute),
    ``channels_last=True`` (run 4-D image activations NHWC inside the graph, see
    :mod:`onnxport_tensorflow.layout`; inputs, outputs and weights keep their ONNX shapes).
    """
    options = {**plan.options, **options}
    graph = plan.model.graph
    builder = _Builder(plan, options)
    builder.collect_initializers()
    builder.mode.training = bool(options.get("training", False))
    program = builder.compile(graph)
    if options.get("channels_last", True):
        layout.plan(program, builder.static, set(builder.param_values.values()))
    else:
        program.hwio = set()
    hoisted = builder.hoist(program)
    held = set(builder.param_values.values()) | set(hoisted.values())
    for v in [v for v in program.hwio if v not in held]:  # small constants: HWIO once, here
        builder.static[v] = layout.lay_out(builder.static[v])
        program.hwio.discard(v)
    variables: dict[str, tf.Variable] = {}
    var_values: dict[str, ir.Value] = {}
    for key, arr in builder.params.items():
        variables[key] = tf.Variable(arr, trainable=True, name=_var_name(key))
        var_values[key] = builder.param_values[key]
    for key, v in hoisted.items():
        variables[key] = tf.Variable(builder.static.pop(v), trainable=False, name=_var_name(key))
        var_values[key] = v
    info = {
        "inputs": [_input_spec(v) for v in graph.inputs],
        "outputs": [v.name for v in graph.outputs],
        "output_dtypes": [v.dtype for v in graph.outputs],
        "graph_name": graph.name,
    }
    seed = options.get("seed")
    return TfModel(program, variables, var_values, builder.static, info, builder.mode, builder.random,
                   None if seed is None else int(seed), name=_var_name(graph.name or "onnx_model"))


from .exporter import ExportSupport  # noqa: E402  (tfexport: the export side)


class TensorflowBackend(ExportSupport, Backend):
    """The TensorFlow backend: ONNX -> :class:`TfModel` (a ``tf.Module``); Keras / TF -> ONNX
    (:class:`~onnxport_tensorflow.exporter.ExportSupport`)."""

    name = "tensorflow"

    # -- native files (onnxport convert): see onnxport_tensorflow.native ---------------------------------------
    native_suffixes = ("",)  # a SavedModel folder

    def can_load(self, path: Any) -> bool:
        """Whether ``path`` is a native file or folder this backend reads."""
        from . import native

        return native.can_load(path)

    def save(self, native_obj: Any, path: Any, example_inputs: Any = ()) -> None:
        """Write ``native_obj`` as native files at ``path`` (see :mod:`onnxport_tensorflow.native`)."""
        from . import native

        native.save(native_obj, path, example_inputs)

    def load(self, path: Any) -> Any:
        """The callable native object at ``path``."""
        return self.load_with_inputs(path)[0]

    def load_with_inputs(self, path: Any) -> tuple[Any, tuple[Any, ...]]:
        """The native object at ``path`` and example inputs to export it with."""
        from . import native

        return native.load(path)

    @property
    def expected_failures(self) -> dict[str, str]:
        from .expected_failures import EXPECTED_FAILURES

        return EXPECTED_FAILURES

    @property
    def dtypes(self) -> frozenset[ir.DataType]:
        return dtypes.HELD_TYPES

    def to_sequential(self, plan: ImportPlan, **options: Any) -> Any:
        from .sequential import to_sequential

        return to_sequential(plan, **options)

    def import_model(self, plan: ImportPlan, **options: Any) -> TfModel:
        return import_plan(plan, **options)

    def from_numpy(self, array: np.ndarray) -> Any:
        return _to_tensor(np.asarray(array))

    def to_numpy(self, value: Any) -> np.ndarray:
        return to_numpy(value)

    def run(self, model: TfModel, inputs: list[Any]) -> list[Any]:
        """Run on numpy inputs through the traced ``tf.function``; outputs as numpy (testkit, CLI).

        When a node needs a value only known at run time at trace time (a data-dependent axis
        list), the graph runs eagerly instead.
        """
        values = model._bind_inputs(tuple(inputs), {})
        values = [model._check_input(spec, x) for spec, x in zip(model._impl.info["inputs"], values)]
        try:
            out = model.serve(*values)
        except DataDependentError:
            out = model.forward(*values)
        outs = list(out) if isinstance(out, tuple) else [out]
        result = []
        for o, dt in zip(outs, model._impl.info["output_dtypes"]):
            o = to_numpy(o)
            if dtypes.carrier(dt) is not None and isinstance(o, np.ndarray):
                o = o.astype(dtypes.to_numpy_dtype(dt))  # exact: the carrier holds grid values
            result.append(o)
        return result
