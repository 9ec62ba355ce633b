"""ONNX IR -> a ``tf.Module`` whose ``__call__`` is a ``tf.function`` over ``tf.Variable`` weights.

The importer resolves every node to its primitive once; the traced function then walks the graph
in topological order, calling one primitive per node. Values computed only from static shapes
and constants stay numpy (folded at import time, or eagerly at trace time under
``tf.init_scope``), so the traced graph holds only the work that depends on inputs and weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import ConversionError, InputError
from onnxport.importing.inputs import bind_inputs, check_shape
from onnxport.importing.layout import plan_program as plan_layout
from onnxport.importing.plan import ImportPlan
from onnxport.importing.program import Env, GraphCompiler, Step, iter_steps
from onnxport.importing.program import Program as _CoreProgram
from onnxport.ir.filedata import read_row_blocks, readable
from onnxport.plugin.backend import Backend
from onnxport.plugin.backend_parts import PackageNative

from . import dtypes, fusion, layout
from .context import CALL, CallState, DataDependentError, Mode, NodeContext, is_static
from .options import EXPORT_OPTIONS, IMPORT_OPTIONS
from .specialize import Specializer, needed_values
from .variables import new_variable

_FOLD_LIMIT = 1 << 26  # elements; larger folded constants stay runtime computations
#: folded constants of at least this many elements read at run time are held in non-trainable
#: variables (``model.constants``) instead of being embedded in every traced graph
_HOIST_MIN = 1 << 12
#: import-time constant Conv weights are embedded in the traced graph (not held), up to this many
#: bytes in all: TensorFlow's oneDNN convolution reorders a constant filter into its blocked
#: layout once and caches it, where a filter read from a variable runs the plain-layout kernel on
#: every call (measured 1.5-3x slower per Conv on AVX-512; see ``benchmarks/bench_tf_import.py``).
#: The cost is at the trace: light resnet50 (94 MB of Conv weights) traces and first runs 2 s
#: slower and peaks 0.9 GB higher (graph copies of the constants)
_EMBED_CONV_BYTES = 1 << 27


# -- values --------------------------------------------------------------------------------
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


# -- compiled graphs -------------------------------------------------------------------------
class _Step(Step):
    """A node run with TensorFlow values: folded eagerly under ``tf.init_scope``; its ops live in
    a name scope of its own, so that run-time TF errors name the ONNX node."""

    __slots__ = ("scope",)
    is_static = staticmethod(is_static)
    convert_value = staticmethod(layout.convert)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.scope = "node"  # the TF name scope of its ops (unique per graph, set by the builder)

    @staticmethod
    def shape_of(x: Any) -> Any:
        return x.shape

    @staticmethod
    def array_of(x: Any) -> Any:
        return x.numpy() if hasattr(x, "numpy") else np.asarray(x)

    def invoke(self, args: list[Any], attrs: dict[str, Any]) -> Any:
        with tf.name_scope(self.scope):  # run-time TF errors name the op by this scope
            try:
                return self.fn(self.ctx, *args, **attrs)
            except DataDependentError as exc:
                if exc.needs is None:  # the innermost node that asked (a subgraph's, if any)
                    exc.needs = needed_values(self.inputs, args, exc.value)
                raise

    def fold(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        # computed from static shapes/constants: evaluate eagerly now, keep it numpy
        with tf.init_scope():
            outs = self.call(args, attrs)
            return [_to_static(o) if _is_concrete(o) else o for o in outs]


class Program(_CoreProgram):
    """A compiled ONNX graph whose layout conversions are TensorFlow transposes."""

    convert_value = staticmethod(layout.convert)


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
    variable), non-trainable running statistics (BatchNormalization's mean and variance, which
    training mode updates) and large non-trainable constants (folded from the graph, held in the
    form the call reads them: a channels-last Conv's weight HWIO, a constant Conv weight with its
    BatchNormalization folded in). Constant Conv weights are graph constants of the traced
    function instead (up to 128 MiB in all, see ``_EMBED_CONV_BYTES``; ``embed_conv=False`` holds
    them), where oneDNN caches their packed form. ``tf.saved_model.save(model, path)`` writes a
    SavedModel whose loaded object is called the same way (positionally), with a
    ``serving_default`` signature (TF Serving, TFLite; :mod:`onnxport_tensorflow.signature`).
    """

    #: folded constants keyed by graph values: no variables, and tf.Module's walk over attributes
    #: (``trainable_variables``) cannot handle their non-string keys
    _TF_MODULE_IGNORED_PROPERTIES = tf.Module._TF_MODULE_IGNORED_PROPERTIES | frozenset({"_static"})

    def __init__(self, program: Program, variables: dict[str, tf.Variable], var_values: dict[str, ir.Value],
                 static: dict[ir.Value, Any], info: dict[str, Any], mode: Mode, random: bool,
                 seed: int | None, name: str | None = None):
        super().__init__(name=name or "onnx_model")
        self._impl = _Internals(program, var_values, static, info)
        self._impl.settings = Specializer(program.graph, info["inputs"], self.forward, lambda: self.serve,
                                          _CallStatsKey)
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
        if hasattr(fn, "_key_for_call_stats"):
            # TF counts the traces of every tf.function of ``TfModel.forward`` (its code object)
            # together and warns of "retracing" after five: each imported model traces once, so
            # a process importing several models was warned. The count is kept per model instead
            # (a model retraced call after call, by train()/eval() toggles, is still warned of)
            fn._key_for_call_stats = self._impl.call_stats_key
        self.__call__ = fn
        if self._impl.settings is not None:
            self._impl.settings.reset()

    @property
    def serve(self) -> Any:
        """The model's ``tf.function`` (input signature from the graph inputs; no input checks)."""
        return self.__dict__["__call__"]

    @property
    def _default_save_signature(self) -> Any:
        """What a plain ``tf.saved_model.save(model, path)`` writes as ``serving_default``: the real
        graph inputs by name, a dict of outputs (:mod:`onnxport_tensorflow.signature`)."""
        from .signature import serving_signature

        return serving_signature(self)

    # -- running ------------------------------------------------------------------------
    def __call__(self, *inputs: Any, **named: Any) -> Any:
        """Check the inputs (dtypes and static dims, no implicit casts; an ONNX type TensorFlow
        has no tensor for, given as its ml_dtypes numpy array, becomes the tensor the model holds
        it in), then run :attr:`serve`. A model with a setting TensorFlow needs at trace time
        (an axis list, split sizes ...) computed from graph inputs runs a ``tf.function``
        specialised on those inputs' values instead, traced once per distinct value (see
        :mod:`onnxport_tensorflow.specialize`); inside a ``tf.function`` of your own they must be
        constants."""
        values = self._bind_inputs(inputs, named)
        values = [self._check_input(spec, x) for spec, x in zip(self._impl.info["inputs"], values)]
        try:
            return self._impl.settings.call(values)
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
            env = Env(self._impl.static)
            for key, v in self._impl.var_values.items():
                var = self.weights[key]
                env[v] = layout.lay_out(var) if v in self._impl.program.hwio else var.value()
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

    def frozen(self) -> Callable[..., Any]:
        """An inference function with the weights' current values as graph constants, called like
        :attr:`serve`; the fastest form for serving (see :func:`onnxport_tensorflow.fusion.frozen`)."""
        return fusion.frozen(self)

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

    __slots__ = ("program", "var_values", "static", "info", "call_stats_key", "settings")

    def __init__(self, program: Program, var_values: dict[str, ir.Value], static: dict[ir.Value, Any],
                 info: dict[str, Any]):
        self.program = program
        self.var_values = var_values
        self.static = static
        self.info = info
        self.call_stats_key = _CallStatsKey()
        self.settings: Specializer | None = None  # set by the model (it calls back into it)


class _CallStatsKey:
    """The key under which TF counts one model's traces (weakly referenced by TF)."""


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
class _Builder(GraphCompiler):
    """Resolves primitives, folds constant subgraphs and picks variables for one import."""

    step_cls = _Step
    program_cls = Program
    context_cls = NodeContext
    data_dependent_error = DataDependentError
    fold_limit = _FOLD_LIMIT
    hoist_min = _HOIST_MIN

    def array_from_ir(self, tensor: Any) -> np.ndarray:
        return dtypes.array_from_ir(tensor)

    def holdable(self, arr: np.ndarray) -> bool:
        return _np_ok(arr.dtype) and arr.dtype.kind in "fiub"

    def new_step(self, node: ir.Node, *args: Any) -> _Step:
        step = super().new_step(node, *args)
        step.scope = f"n{self.node_count}_{_scope_part(node.name or node.op_type)}"
        return step


def _run_error(program: Program, exc: Any) -> ConversionError:
    """A TF run-time error as a :class:`ConversionError` naming the ONNX node whose op failed."""
    import re

    scopes = {step.scope: step.ctx.label for step in iter_steps(program)}
    found = re.search(r"\{\{node ([^}]+)\}\}", exc.message or "")
    label = None
    for part in (found.group(1).split("/") if found else []):
        label = scopes.get(part) or scopes.get(re.sub(r"_\d+$", "", part))
        if label:
            break
    where = f"node {label}" if label else "the model"
    lines = (exc.message or "").strip().splitlines()
    first = next((line.strip() for line in lines if "ONNXPORT_MAX_ELEMENTS" in line), lines[0] if lines else "")
    return ConversionError(f"{where} failed at run time: {type(exc).__name__}: {first}")


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


#: weights at least this large that the model file holds as they are fill their variable from the
#: file block by block (``tf.Variable(array)`` holds up to three copies of the array at once: at
#: 32 MB, ResNet-50's 9 MB weights took its import peak from 1.22x to 1.37x the weights)
_BLOCK_FILL_BYTES = 1 << 20
#: the bytes read per block (a reused buffer, and TF's copy of it for the assignment)
_BLOCK_BYTES = 4 << 20


def _variable(arrays: dict[str, np.ndarray], key: str, value: ir.Value, *, trainable: bool) -> tf.Variable:
    """The variable of weight ``key``, taking its host array out of ``arrays`` (dropped here)."""
    arr = arrays.pop(key)
    tensor = value.const_value
    if not (arr.nbytes >= _BLOCK_FILL_BYTES and arr.ndim >= 1 and readable(tensor)
            and arr.dtype == np.dtype(tensor.dtype.numpy()) and arr.shape == tuple(tensor.shape.numpy())):
        return new_variable(arr, trainable=trainable, name=_var_name(key))
    shape, dtype = arr.shape, tf.as_dtype(arr.dtype)
    del arr  # the file holds the same bytes: the variable is filled from it, one block at a time
    var = new_variable(lambda: tf.zeros(shape, dtype), dtype=dtype, shape=shape, trainable=trainable,
                       name=_var_name(key))
    for first, rows in read_row_blocks(tensor, block_bytes=_BLOCK_BYTES):
        tf.raw_ops.ResourceStridedSliceAssign(ref=var.handle, begin=[first], end=[first + len(rows)],
                                              strides=[1], value=rows)
    return var


def _keep_conv_weights_embedded(hoisted: dict[str, ir.Value], program: Program,
                                static: dict[ir.Value, Any]) -> dict[str, ir.Value]:
    """``hoisted`` less the constant Conv weights that stay embedded in the traced graph (graph
    constants, see :data:`_EMBED_CONV_BYTES`)."""
    filters = {step.inputs[1] for step in iter_steps(program)
               if step.node is not None and step.node.op_type == "Conv" and step.node.domain in ("", "ai.onnx")
               and len(step.inputs) > 1}
    budget = _EMBED_CONV_BYTES
    kept: dict[str, ir.Value] = {}
    for key, v in hoisted.items():
        if v in filters and static[v].nbytes <= budget:
            budget -= static[v].nbytes
        else:
            kept[key] = v
    return kept


def import_plan(plan: ImportPlan, **options: Any) -> TfModel:
    """Build the :class:`TfModel` for a prepared plan.

    Options: ``trainable="auto"|"all"|"none"`` (which float initializers become trainable
    variables), ``training=False``, ``seed=None`` (seeds ops without a ``seed`` attribute),
    ``channels_last=True`` (run 4-D image activations NHWC inside the graph, see
    :mod:`onnxport_tensorflow.layout`; inputs, outputs and weights keep their ONNX shapes),
    ``fuse=True`` (at inference, fold a BatchNormalization into the Conv that feeds it, see
    :mod:`onnxport_tensorflow.fusion`), ``embed_conv=True`` (constant Conv weights are graph
    constants of the traced function, up to ``_EMBED_CONV_BYTES`` in all; False holds them in
    non-trainable variables: a smaller, faster trace, slower convolutions).
    """
    options = {**plan.options, **options}
    graph = plan.model.graph
    builder = _Builder(plan, options, Mode())
    builder.collect_initializers()
    builder.mode.training = bool(options.get("training", False))
    program = builder.compile(graph)
    if options.get("channels_last", True):
        plan_layout(plan, program, static=builder.static, params=set(builder.param_values.values()))
    else:
        program.hwio = set()
    if options.get("fuse", True):
        fusion.fuse_conv_batch_norm(program)
        fusion.fold_constant_pairs(program, builder.static)
    hoisted = builder.hoist(program)
    if options.get("embed_conv", True):
        hoisted = _keep_conv_weights_embedded(hoisted, program, builder.static)
    params = set(builder.param_values.values())
    for v in [v for v in program.hwio if v not in params]:  # constants (held or not): HWIO once, here
        builder.static[v] = layout.lay_out(builder.static[v])
        program.hwio.discard(v)
    variables: dict[str, tf.Variable] = {}
    var_values: dict[str, ir.Value] = {}
    # each host array is dropped once its variable holds the values: the peak stays near one copy
    for key in list(builder.params):
        variables[key] = _variable(builder.params, key, builder.param_values[key], trainable=True)
        var_values[key] = builder.param_values[key]
    for key in list(builder.state):  # running statistics: updated in training, not trained
        variables[key] = _variable(builder.state, key, builder.param_values[key], trainable=False)
        var_values[key] = builder.param_values[key]
    for key, v in hoisted.items():
        variables[key] = new_variable(builder.static.pop(v), trainable=False, name=_var_name(key))
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


from .export_support import ExportSupport  # noqa: E402  (the export side)


class TensorflowBackend(ExportSupport, PackageNative, Backend):
    """The TensorFlow backend: ONNX -> :class:`TfModel` (a ``tf.Module``); Keras / TF -> ONNX
    (:class:`~onnxport_tensorflow.export_support.ExportSupport`)."""

    name = "tensorflow"
    import_options = IMPORT_OPTIONS
    export_options = EXPORT_OPTIONS

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
        """Call the model on numpy inputs exactly as a user does (``model(*inputs)``); outputs as
        numpy, a narrow ONNX type's carrier as that type (testkit, CLI)."""
        out = model(*inputs)
        outs = list(out) if isinstance(out, tuple) else [out]
        result = []
        for o, dt in zip(outs, model._impl.info["output_dtypes"]):
            o = to_numpy(o)
            if dtypes.carrier(dt) is not None and isinstance(o, np.ndarray):
                o = o.astype(dtypes.to_numpy_dtype(dt))  # exact: the carrier holds grid values
            result.append(o)
        return result
