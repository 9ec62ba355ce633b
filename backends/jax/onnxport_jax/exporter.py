"""JAX -> ONNX: ``jax.make_jaxpr`` of the function, then one export primitive per JAX primitive.

The flow: the object (a function, a ``fn(params, *inputs)`` with its ``params``, a Flax NNX
module, an imported :class:`~onnxport_jax.importer.JaxModel`) becomes ``fn(params, *inputs)`` ->
``jax.make_jaxpr`` on the example inputs (symbolic dims from ``dynamic_shapes`` through
``jax.export`` shape polymorphism) -> a check that every primitive has an export primitive (one
error lists them all) -> walk the jaxpr, calling the primitive registered as ``lax.<name>`` with
a :class:`JaxGraph` as ``g`` -> the core's export pipeline (optimize, opset, check).

Leaves of ``params`` become initializers named by their key paths (``layers.0.kernel``; a
JaxModel's ONNX names); arrays the function closes over become initializers ``const_<i>``. One
array object is one initializer (tied weights). ``jit`` / ``closed_call`` / ``custom_jvp_call`` /
``custom_vjp_call`` are inlined (their primal computation; with ``functions=True`` a ``jit`` call
is a model-local function call); ``cond`` is If, ``while`` Loop,
``scan`` Loop (see :mod:`onnxport_jax.ops.export`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import onnx_ir as ir
from jax.extend.core import jaxprs_in_params

from onnxport.errors import ConversionError, InputError, UnsupportedOpError
from onnxport.exporting import pipeline as _export
from onnxport.exporting.builder import Builder
from onnxport.exporting.pipeline import FunctionBody
from onnxport.optional import loaded
from onnxport.plugin.opfacts import mark_not_trainable

from . import dtypes, layers

#: JAX primitives that carry PRNG keys: refused unless the key is a constant the trace folded
RANDOM_PRIMITIVES = {"random_seed", "random_bits", "random_wrap", "random_unwrap", "random_split",
                     "random_fold_in", "threefry2x32"}


def target_name(primitive: Any) -> str:
    """The registry key of a JAX primitive: ``lax.dot_general``, ``lax.jit`` ..."""
    return f"lax.{primitive.name}"


def _path_name(path: Sequence[Any]) -> str:
    """``layers.0.kernel`` from a pytree key path (a trailing Variable ``.value`` dropped)."""
    parts = []
    for k in path:
        if isinstance(k, jax.tree_util.DictKey):
            parts.append(str(k.key))
        elif isinstance(k, jax.tree_util.SequenceKey):
            parts.append(str(k.idx))
        elif isinstance(k, jax.tree_util.GetAttrKey):
            parts.append(k.name)
        elif isinstance(k, jax.tree_util.FlattenedIndexKey):
            parts.append(str(k.key))
        else:
            parts.append(str(k).strip(".[]'\""))
    if len(parts) > 1 and parts[-1] == "value":
        parts.pop()
    return ".".join(parts) or "param"


class SymDim:
    """A symbolic size while it is computed: a 1-element int64 ONNX value with Python arithmetic
    (what ``jax.export``'s dimension expressions evaluate to)."""

    def __init__(self, g: Builder, value: ir.Value):
        self.g, self.value = g, value
        value.dtype, value.shape = ir.DataType.INT64, ir.Shape([1])

    def _v(self, other: Any) -> ir.Value:
        if isinstance(other, SymDim):
            return other.value
        return self.g.const(np.asarray([int(other)], dtype=np.int64))

    def _bin(self, op: str, a: Any, b: Any) -> SymDim:
        return SymDim(self.g, self.g.op(op, self._v(a), self._v(b)))

    def __add__(self, o): return self._bin("Add", self, o)
    def __radd__(self, o): return self._bin("Add", o, self)
    def __sub__(self, o): return self._bin("Sub", self, o)
    def __rsub__(self, o): return self._bin("Sub", o, self)
    def __mul__(self, o): return self._bin("Mul", self, o)
    def __rmul__(self, o): return self._bin("Mul", o, self)
    def __neg__(self): return self._bin("Sub", 0, self)

    def __floordiv__(self, o):  # sizes are non-negative: integer Div is floor division
        return self._bin("Div", self, o)

    def __mod__(self, o):
        return self._bin("Mod", self, o)

    def max(self, o): return self._bin("Max", self, o)
    def min(self, o): return self._bin("Min", self, o)


class JaxGraph(Builder):
    """The ``g`` a JAX export primitive receives: the core builder plus jaxpr helpers."""

    def __init__(self, opset: int, *, name: str = "main_graph", parent: JaxGraph | None = None,
                 converter: _Converter | None = None):
        super().__init__(opset, name=name, parent=parent)
        self.converter = converter if converter is not None else (parent.converter if parent else None)
        #: the equation being converted
        self.eqn: Any = None

    # -- what the traced equation says --------------------------------------------------------------
    def out_aval(self, i: int = 0) -> Any:
        return self.eqn.outvars[i].aval

    def in_aval(self, i: int) -> Any:
        return self.eqn.invars[i].aval

    def out_dtype(self, i: int = 0) -> ir.DataType:
        return dtypes.to_onnx_dtype(self.out_aval(i).dtype)

    def out_shape(self, i: int = 0) -> tuple[Any, ...]:
        return tuple(self.out_aval(i).shape)

    @staticmethod
    def onnx_dtype(dtype: Any) -> ir.DataType:
        return dtypes.to_onnx_dtype(dtype)

    def error(self, message: str) -> ConversionError:
        """An error naming the current primitive and where it came from."""
        name = target_name(self.eqn.primitive) if self.eqn is not None else "?"
        where = ""
        if self.eqn is not None:
            info = getattr(self.eqn, "source_info", None)
            try:
                from jax._src import source_info_util

                where = f" at {source_info_util.summarize(info)}" if info is not None else ""
            except Exception:  # pragma: no cover - source info is best effort
                where = ""
        return ConversionError(f"exporting {name}{where}: {message}")

    # -- values and sizes ------------------------------------------------------------------------
    def rank(self, v: ir.Value) -> int:
        if v.shape is None:
            raise self.error(f"the rank of value {v.name!r} is unknown")
        return len(v.shape)

    def const(self, value: Any, dtype: ir.DataType | None = None) -> ir.Value:
        """A Constant node; a float64 array stays float64 (JAX with x64 on)."""
        if dtype is None and isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.float64:
            dtype = ir.DataType.DOUBLE
        return super().const(value, dtype)

    def scalar(self, value: Any, dtype: ir.DataType) -> ir.Value:
        """A 0-d constant of ``dtype``."""
        if dtype == ir.DataType.BFLOAT16:
            return self.cast(self.const(np.asarray(value, dtype=np.float32)), dtype)
        return self.const(np.asarray(value, dtype=dtypes.to_numpy_dtype(dtype)))

    def dim(self, d: Any) -> int | ir.Value:
        """A size: an int when static, else a 1-element int64 value computed from the inputs."""
        if isinstance(d, (int, np.integer)):
            return int(d)
        try:
            return int(d)
        except Exception:
            pass
        out = d._evaluate(self.converter.sym_env(self))
        if isinstance(out, SymDim):
            return out.value
        return int(out)

    def shape(self, dims: Sequence[Any]) -> ir.Value:
        """A 1-D int64 shape value from static and symbolic sizes."""
        return self.ints([self.dim(d) for d in dims])

    def static(self, dims: Sequence[Any]) -> bool:
        return all(isinstance(self.dim_or_none(d), int) for d in dims)

    @staticmethod
    def dim_or_none(d: Any) -> int | None:
        try:
            return int(d)
        except Exception:
            return None

    def used_once(self, i: int) -> bool:
        """Whether operand ``i`` of the current equation is read by it alone (and is no output)."""
        var = self.eqn.invars[i]
        return type(var).__name__ != "Literal" and self.converter.uses.get(var, 0) == 1

    def weight_layout(self, w: ir.Value, perm: Sequence[int], flip: Sequence[int] = ()) -> ir.Value:
        """``w`` transposed by ``perm`` (then reversed along ``flip``): for a weight, an initializer
        holding that layout under the weight's name (the original keeps it only if something else
        reads it); for other values, Transpose (and Slice) nodes."""
        perm, flip = list(perm), list(flip)
        if perm == list(range(len(perm))) and not flip:
            return w
        if w.const_value is not None and self._initializers.get(w.name) is w:
            key = ("layout", id(w), tuple(perm), tuple(flip))
            root = self if self.parent is None else self.parent
            while root.parent is not None:
                root = root.parent
            if key in root._init_keys:
                return root._init_keys[key]
            arr = np.transpose(w.const_value.numpy(), perm)
            if flip:
                arr = np.flip(arr, axis=tuple(flip))
            name = w.name
            old = root.unique_name(f"{name}.{''.join('OIHWDX'[p] if p < 6 else str(p) for p in perm)}_source")
            root._names.discard(name)
            del root._initializers[name]
            w.name = old
            root._initializers[old] = w
            return root.initializer(name, np.ascontiguousarray(arr), key=key)
        y = self.op("Transpose", w, perm=perm)
        if flip:
            n = len(flip)
            y = self.op("Slice", y, self.const(np.full(n, -1, np.int64)),
                        self.const(np.full(n, np.iinfo(np.int64).min, np.int64)),
                        self.const(np.asarray(flip, np.int64)), self.const(np.full(n, -1, np.int64)))
        return y

    def inline(self, closed: Any, args: Sequence[ir.Value]) -> list[ir.Value]:
        """Convert a (closed) jaxpr into this graph, its inputs bound to ``args``."""
        saved = self.eqn
        try:
            return self.converter.run(self, closed, list(args))
        finally:
            self.eqn = saved

    def subgraph(self, name: str) -> JaxGraph:
        """A builder for a subgraph (If branch, Loop body) nested in this one."""
        return JaxGraph(self.opset, name=self.unique_name(name), parent=self)

    def fresh(self, base: str) -> str:
        """A value name not used in the model yet (not claimed: for :meth:`input`)."""
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        return name

    def sub_input(self, name: str, aval: Any) -> ir.Value:
        """A subgraph input typed like ``aval``."""
        return self.input(self.fresh(name), *self.converter.aval_type(aval))


class JaxFunctionGraph(FunctionBody, JaxGraph):
    """The builder of a model-local function body (``functions=True``): arrays are Constants."""


class _Converter:
    """Walks a jaxpr and calls the export primitives."""

    def __init__(self, registry: Any, dim_inputs: dict[str, tuple[ir.Value, int]], functions: bool = False):
        self.registry = registry
        #: ``functions=True``: nested ``jit`` calls become model-local functions
        self.functions = functions
        #: a called jaxpr's name, text and consts -> (the jaxpr, kept alive; its function's name)
        self._function_names: dict[tuple[Any, ...], tuple[Any, str]] = {}
        #: symbolic dim name -> (graph input, axis) it is read from
        self.dim_inputs = dim_inputs
        self.used_targets: set[str] = set()
        self.constant_names: set[str] = set()
        #: closed-over arrays are the weights (``fn(*inputs)``), else state beside the params
        self.consts_are_weights = True
        self._sym_cache: dict[tuple[int, str], SymDim] = {}
        #: jaxpr variable -> how many times it is read (operands and outputs)
        self.uses: dict[Any, int] = {}

    def sym_env(self, g: JaxGraph) -> dict[str, SymDim]:
        env = {}
        for name, (value, axis) in self.dim_inputs.items():
            key = (id(g), name)
            if key not in self._sym_cache:
                if g.opset >= 15:
                    shape = g.op("Shape", value, start=axis, end=axis + 1)
                else:  # Shape takes start/end from opset 15 on: slice the whole shape
                    shape = g.op("Slice", g.op("Shape", value), g.const(np.asarray([axis], dtype=np.int64)),
                                 g.const(np.asarray([axis + 1], dtype=np.int64)))
                self._sym_cache[key] = SymDim(g, shape)
            env[name] = self._sym_cache[key]
        return env

    def as_function(self, closed: Any) -> bool:
        """Whether a nested call of ``closed`` is exported as a function (``functions=True``,
        static shapes: a function body cannot read the graph's symbolic sizes)."""
        jaxpr = getattr(closed, "jaxpr", closed)
        avals = [v.aval for v in [*jaxpr.invars, *jaxpr.outvars] if hasattr(v.aval, "shape")]
        return self.functions and all(isinstance(self.dim_label(d), int) for a in avals for d in a.shape)

    def call_function(self, g: JaxGraph, name: str, closed: Any, args: Sequence[ir.Value]) -> list[ir.Value]:
        """A call node of the model-local function made from ``closed`` (made once per body:
        calls with the same name, jaxpr text and closed-over arrays share it)."""
        jaxpr = getattr(closed, "jaxpr", closed)
        domain = _export.function_domain("jax")
        # calls with equal bodies share the function (each ``nnx.jit(...)`` call traces anew)
        key = (name, str(jaxpr), tuple(id(c) for c in getattr(closed, "consts", ())))
        known = self._function_names.get(key)
        if known is None:
            root = g
            while root.parent is not None:
                root = root.parent
            taken = {n for _, n in self._function_names.values()}
            base = re.sub(r"\W", "_", name) or "jit"
            fname, k = base, 0
            while fname in taken:
                k += 1
                fname = f"{base}_{k}"
            body = JaxFunctionGraph(g.opset, name=fname, parent=root)
            ins = [body.input(f"x{i}", *self.aval_type(v.aval)) for i, v in enumerate(jaxpr.invars)]
            saved = body.eqn
            outs = self.run(body, closed, ins)
            body.eqn = saved
            for i, (o, var) in enumerate(zip(outs, jaxpr.outvars)):
                out = body.output(o, f"y{i}")
                self.annotate(out, var.aval)
            _export.add_function(root, body, fname, domain)
            self._function_names[key] = known = (closed, fname)
        outs = g.op(known[1], *args, domain=domain, outputs=len(jaxpr.outvars))
        return list(outs) if isinstance(outs, tuple) else [outs]

    def aval_type(self, aval: Any) -> tuple[ir.DataType, list[int | str]]:
        return dtypes.to_onnx_dtype(aval.dtype), [self.dim_label(d) for d in aval.shape]

    @staticmethod
    def dim_label(d: Any) -> int | str:
        try:
            return int(d)
        except Exception:
            return str(d).replace(" ", "")

    def annotate(self, value: ir.Value, aval: Any) -> None:
        if not hasattr(aval, "shape"):
            return
        value.dtype, shape = self.aval_type(aval)
        value.shape = ir.Shape(shape)

    def literal(self, g: JaxGraph, lit: Any) -> ir.Value:
        aval = lit.aval
        dt = dtypes.to_onnx_dtype(aval.dtype)
        if dt == ir.DataType.BFLOAT16:
            return g.cast(g.const(np.asarray(lit.val, dtype=np.float32)), dt)
        return g.const(np.asarray(lit.val, dtype=aval.dtype))

    def constant(self, g: JaxGraph, i: int, arr: Any) -> ir.Value:
        """A closed-over array: an initializer (one per array object)."""
        if jax.dtypes.issubdtype(getattr(arr, "dtype", np.float32), jax.dtypes.prng_key):
            raise ConversionError(
                "the function closes over a PRNG key array; random number generation is not "
                "exported (draw the random values outside the function and pass them in)")
        a = np.asarray(arr)
        if a.size <= 16 or a.dtype.kind in "biu":
            return self.literal_array(g, a)
        name, k = f"const_{i}", 0
        while name in g._names:
            k += 1
            name = f"const_{i}_{k}"
        v = g.initializer(name, a, key=("const", id(arr)))
        if not self.consts_are_weights:  # beside params: state such as batch-norm statistics
            mark_not_trainable(v)
        return v

    @staticmethod
    def literal_array(g: JaxGraph, a: np.ndarray) -> ir.Value:
        if a.dtype.name == "bfloat16":
            return g.cast(g.const(a.astype(np.float32)), ir.DataType.BFLOAT16)
        return g.const(a)

    def run(self, g: JaxGraph, closed: Any, args: list[Any]) -> list[ir.Value]:
        """Convert ``closed`` (a ClosedJaxpr, or a Jaxpr with no consts) into ``g``."""
        jaxpr = getattr(closed, "jaxpr", closed)
        consts = list(getattr(closed, "consts", ()))
        env: dict[Any, Any] = {}
        for i, (v, c) in enumerate(zip(jaxpr.constvars, consts)):
            env[v] = self.constant(g, i, c)
        if len(jaxpr.invars) != len(args):
            raise ConversionError(f"a jaxpr takes {len(jaxpr.invars)} inputs, got {len(args)}")
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            for v in eqn.invars:
                if type(v).__name__ != "Literal":
                    self.uses[v] = self.uses.get(v, 0) + 1
        for v in jaxpr.outvars:
            if type(v).__name__ != "Literal":
                self.uses[v] = self.uses.get(v, 0) + 1

        def read(v: Any) -> Any:
            if type(v).__name__ == "Literal":
                return self.literal(g, v)
            return env[v]

        for eqn in jaxpr.eqns:
            name = target_name(eqn.primitive)
            if eqn.primitive.name in RANDOM_PRIMITIVES:
                raise UnsupportedOpError(
                    f"{name}: random number generation (PRNG keys) is not exported; only random "
                    "values that are constants of the function can be (draw them outside and pass "
                    "them in as inputs or closed-over arrays)")
            prim = self.registry.find_export("jax", name)
            if prim is None:
                raise UnsupportedOpError(f"JAX primitive {eqn.primitive.name!r} has no export primitive ({name})")
            self.used_targets.add(name)
            g.eqn = eqn
            ins = [read(v) for v in eqn.invars]
            params = dict(eqn.params)
            with g.scope(_scope_name(eqn)):
                out = prim.fn(g, *ins, **params)
            g.eqn = eqn
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if len(outs) != len(eqn.outvars):
                raise g.error(f"the primitive gave {len(outs)} outputs for {len(eqn.outvars)}")
            for var, val in zip(eqn.outvars, outs):
                if type(var).__name__ == "DropVar":
                    continue
                if not isinstance(val, ir.Value):
                    raise g.error(f"the primitive returned {type(val).__name__}, not a value")
                if g.owns(val.producer()):
                    self.annotate(val, var.aval)
                env[var] = val
        return [read(v) for v in jaxpr.outvars]


def _scope_name(eqn: Any) -> str:
    """A node name from the primitive and, where JAX recorded one, the name stack."""
    stack = str(getattr(getattr(eqn, "source_info", None), "name_stack", "") or "")
    base = eqn.primitive.name
    return f"{stack}/{base}" if stack else base


# -- what is exported ----------------------------------------------------------------------------
def _is_nnx_module(obj: Any) -> bool:
    nnx = loaded("flax.nnx")  # Flax is optional: a module of it exists only once it is imported
    return nnx is not None and isinstance(obj, nnx.Module)


def _as_function(obj: Any, params: Any) -> tuple[Callable[..., Any], Any, bool]:
    """``(fn, params, takes_params)``: what is traced, as ``fn(params, *inputs)`` when it has params."""
    from .model import JaxModel

    if isinstance(obj, JaxModel):
        consts, state_keys = obj.consts, set(obj.state)

        def apply_model(p: Any, *xs: Any) -> Any:  # p: params and state (running statistics) in one dict
            return obj.apply({k: v for k, v in p.items() if k not in state_keys}, *xs, consts=consts,
                             state={k: v for k, v in p.items() if k in state_keys})

        return apply_model, {**obj.state, **obj.params} if params is None else params, True
    if _is_nnx_module(obj):
        from flax import nnx

        # the module's random-number state (an LSTM cell keeps its Rngs to draw initial carries)
        # is no parameter: closed over, it is a constant (a draw an output depends on is refused).
        # The module is rebuilt inside the trace from copies of its Variables, as nnx.jit does, so
        # a call may advance its Rngs counts or other state; the user's module stays as it was
        graphdef, rngs, state = nnx.split(obj, nnx.RngState, ...)

        def apply_module(s: Any, *xs: Any) -> Any:
            return nnx.merge(graphdef, rngs, s, copy=True)(*xs)

        return apply_module, state if params is None else params, True
    if not callable(obj):
        raise InputError(f"export_model exports a JAX function or a Flax NNX module, not {type(obj).__name__}")
    return obj, params, params is not None


def _trainable_leaves(params: Any, n: int) -> list[bool]:
    """Per leaf of ``params``: whether it is a weight to train. An NNX state's leaves are weights
    when they are ``nnx.Param`` (``BatchStat`` & co. are not); any other pytree's leaves all are."""
    nnx = loaded("flax.nnx")
    if nnx is None:
        return [True] * n
    variables = jax.tree_util.tree_leaves(params, is_leaf=lambda x: isinstance(x, nnx.Variable))
    if len(variables) != n or not any(isinstance(v, nnx.Variable) for v in variables):
        return [True] * n
    return [not isinstance(v, nnx.Variable) or isinstance(v, nnx.Param) for v in variables]


def _arg_specs(args: tuple[Any, ...], dynamic_shapes: Any) -> tuple[list[Any], dict[str, int]]:
    """Per input: the array or a ShapeDtypeStruct with ``jax.export`` symbolic dims."""
    if dynamic_shapes is None:
        return list(args), {}
    specs = list(dynamic_shapes) + [None] * (len(args) - len(dynamic_shapes))
    names: list[str] = []
    for s in specs:
        if s is None:
            continue
        if not isinstance(s, dict):
            raise InputError(f"dynamic_shapes: give one dict per input from axis to a name, not {s!r}")
        for v in s.values():
            label = getattr(v, "__name__", v)
            if not isinstance(label, str) or not label.isidentifier():
                raise InputError(f"dynamic_shapes: dim names are identifiers, not {label!r}")
            if label not in names:
                names.append(label)
    symbols = dict(zip(names, jax.export.symbolic_shape(", ".join(names)))) if names else {}
    out = []
    for a, s in zip(args, specs):
        if not s:
            out.append(a)
            continue
        shape = list(np.shape(a))
        for axis, v in s.items():
            shape[int(axis)] = symbols[getattr(v, "__name__", v)]
        out.append(jax.ShapeDtypeStruct(tuple(shape), jnp.asarray(a).dtype if not hasattr(a, "dtype") else a.dtype))
    return out, {n: i for i, n in enumerate(names)}


def trace(obj: Any, example_inputs: Any = (), *, params: Any = None, dynamic_shapes: Any = None,
          prepared: tuple[Callable[..., Any], Any, bool] | None = None) -> tuple[Any, list[str], int]:
    """``(closed_jaxpr, param names, number of params)`` of the object on the example inputs
    (``prepared``: what :func:`_as_function` already gave for it, so a module is split once)."""
    fn, params, takes = prepared if prepared is not None else _as_function(obj, params)
    args = example_inputs if isinstance(example_inputs, tuple) else (
        tuple(example_inputs) if isinstance(example_inputs, list) else (example_inputs,))
    specs, _ = _arg_specs(args, dynamic_shapes)
    names: list[str] = []
    if takes:
        leaves = jax.tree_util.tree_flatten_with_path(params)[0]
        names = [_path_name(p) for p, _ in leaves]
    wide = any(isinstance(a, jax.Array) and getattr(a.dtype, "kind", None) in ("i", "u", "f")
               and a.dtype.itemsize == 8 for a in args)
    try:
        # a 64-bit JAX array exists only where x64 was on when it was made: trace with it on
        with jax.enable_x64(True) if wide else contextlib.nullcontext():
            closed = jax.make_jaxpr(fn)(params, *specs) if takes else jax.make_jaxpr(fn)(*specs)
    except Exception as exc:
        raise ConversionError(f"jax.make_jaxpr could not trace {getattr(fn, '__name__', type(obj).__name__)}: "
                              f"{type(exc).__name__}: {exc}") from exc
    return _without_dead_draws(closed), names, len(names)


def _is_key(x: Any) -> bool:
    dt = getattr(x, "dtype", None)
    return dt is not None and not isinstance(dt, np.dtype) and jax.dtypes.issubdtype(dt, jax.dtypes.prng_key)


def _without_dead_draws(closed: Any) -> Any:
    """``closed`` without the computations no output reads, when it draws random numbers.

    A module may draw from its ``Rngs`` where the result does not depend on the draw (an RNN's
    initial carry made by a zeros initializer from a fresh key): those draws, the key arithmetic
    and the closed-over keys are dead code and go; a draw an output depends on stays (and is
    refused by :func:`check_supported`)."""
    if not (any(_is_key(c) for c in closed.consts)
            or any(e.primitive.name in RANDOM_PRIMITIVES for e in _iter_eqns(closed.jaxpr))):
        return closed
    from jax._src.interpreters import partial_eval as pe

    jaxpr = closed.jaxpr
    keep = [False] * len(jaxpr.constvars) + [True] * len(jaxpr.invars)  # every input stays an input
    new, used_consts, _ = pe.dce_jaxpr_consts(jaxpr, [True] * len(jaxpr.outvars), instantiate=keep)
    consts = [c for c, used in zip(closed.consts, used_consts) if used]
    return jax.extend.core.ClosedJaxpr(new, consts)


def check_supported(closed: Any, registry: Any) -> None:
    """Raise one error listing every primitive of the jaxpr (subjaxprs included) without an export primitive."""
    missing: dict[str, int] = {}
    keys = [v for v in closed.jaxpr.invars if not isinstance(getattr(v.aval, "dtype", None), np.dtype)
            and jax.dtypes.issubdtype(v.aval.dtype, jax.dtypes.prng_key)]  # numpy dtypes are no keys
    for eqn in _iter_eqns(closed.jaxpr):
        name = target_name(eqn.primitive)
        if eqn.primitive.name in RANDOM_PRIMITIVES or keys:
            raise UnsupportedOpError(
                f"{name}: random number generation (PRNG keys) is not exported; only random values "
                "that are constants of the function can be (draw them outside and pass them in as "
                "inputs or closed-over arrays)")
        if registry.find_export("jax", name) is None:
            missing[name] = missing.get(name, 0) + 1
    if missing:
        lines = "\n".join(f"  {n} ({c} use{'s' if c > 1 else ''})" for n, c in sorted(missing.items()))
        raise UnsupportedOpError(f"no export primitive for {len(missing)} JAX primitive(s) of this function:\n{lines}")


def _iter_eqns(jaxpr: Any):
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jaxprs_in_params(eqn.params):
            yield from _iter_eqns(sub)


# -- entry point ---------------------------------------------------------------------------------
def export_model(
    obj: Any,
    example_inputs: Any = (),
    *,
    params: Any = None,
    dynamic_shapes: Any = None,
    **options: Any,
) -> ir.Model:
    """Export a JAX function or Flax NNX module to an ONNX IR model.

    :param obj: ``fn(*inputs)`` (closed-over arrays become initializers), ``fn(params, *inputs)``
        with ``params`` (a Linen ``module.apply`` with its variables, any pure function), a Flax
        NNX module (its state: parameters, batch statistics ...) or an imported ``JaxModel``.
    :param example_inputs: an array or a tuple of positional input arrays.
    :param params: the pytree ``obj`` takes first; its leaves become initializers named by their
        key paths (``params.Dense_0.kernel``, ``layers.0.kernel``).
    :param dynamic_shapes: one dict per input from axis to a name (``({0: "batch"},)``): traced
        with ``jax.export`` symbolic dims, written as ONNX ``dim_param``s.
    :param options: the common export options (:class:`onnxport.exporting.pipeline.ExportOptions`: ``opset``,
        ``optimize``, ``fold_batchnorm``, ``fuse``, ``input_names``, ``output_names``;
        ``functions=True`` exports each nested ``jit`` call (a ``jax.jit``-decorated inner
        function) as a call of a model-local function, one per traced body; otherwise calls are
        inlined). Graph inputs are ``input_0`` ... unless named;
        an imported JaxModel keeps its ONNX input and output names.
    """
    with _export.paused_gc():
        return _export_model(obj, example_inputs, params=params, dynamic_shapes=dynamic_shapes, **options)


def _export_model(obj: Any, example_inputs: Any, *, params: Any, dynamic_shapes: Any, **options: Any) -> ir.Model:
    from onnxport.plugin.discovery import registry

    opts = _export.ExportOptions.from_kwargs(options)
    if options:
        raise InputError(f"unknown export options for the jax backend: {sorted(options)}")
    opset = _export.choose_opset(opts.opset)
    from .model import JaxModel

    if isinstance(obj, JaxModel):
        opts.input_names = opts.input_names or obj.input_names
        opts.output_names = opts.output_names or obj.output_names
    fn, params, takes = prepared = _as_function(obj, params)
    # Flax layers as single primitives, which write the ops the optimized and fused graph has: not
    # with optimize=False or fuse=False (the traced form stays there), nor with functions=True
    # (nested jit calls of the layers' own code become functions)
    whole = opts.functions or not opts.optimize or opts.fuse is False
    with contextlib.nullcontext() if whole else layers.intercepting(opset):
        closed, names, n_params = trace(obj, example_inputs, dynamic_shapes=dynamic_shapes, prepared=prepared)
    reg = registry()
    check_supported(closed, reg)
    g = JaxGraph(opset, name=getattr(fn, "__name__", type(obj).__name__).strip("<>") or "main_graph")
    args = example_inputs if isinstance(example_inputs, tuple) else (
        tuple(example_inputs) if isinstance(example_inputs, list) else (example_inputs,))
    _, dim_index = _arg_specs(args, dynamic_shapes)
    dim_inputs: dict[str, tuple[ir.Value, int]] = {}
    conv = _Converter(reg, dim_inputs, functions=opts.functions)
    g.converter = conv
    invars = closed.jaxpr.invars
    param_leaves = jax.tree_util.tree_leaves(params) if takes else []
    conv.consts_are_weights = not takes
    trainable = _trainable_leaves(params, len(param_leaves)) if takes else []
    if isinstance(obj, JaxModel) and takes:  # its state leaves (running statistics) are no weights
        trainable = [getattr(path[0], "key", None) not in obj.state
                     for path, _ in jax.tree_util.tree_flatten_with_path(params)[0]]
    values: list[ir.Value] = []
    for leaf, name, train in zip(param_leaves, names, trainable):
        unique, k = name, 0
        while unique in g._names:
            k += 1
            unique = f"{name}_{k}"
        values.append(g.initializer(unique, np.asarray(leaf), key=("param", id(leaf))))
        if not train:
            mark_not_trainable(values[-1])
    specs = list(dynamic_shapes or []) + [None] * len(args)
    for i, var in enumerate(invars[n_params:]):
        dt, shape = conv.aval_type(var.aval)
        v = g.input(f"input_{i}", dt, shape)
        values.append(v)
        for axis, label in (specs[i] or {}).items():
            label = getattr(label, "__name__", label)
            dim_inputs.setdefault(label, (v, int(axis)))
    del dim_index
    outs = conv.run(g, closed, values)
    for i, v in enumerate(outs):
        g.output(v, f"output_{i}")
    for out, var in zip(g.outputs, closed.jaxpr.outvars):
        conv.annotate(out, var.aval)
    model = g.model(producer="onnxport-jax")
    if opts.optimize:  # channels-last layers: move their Transposes down so that pairs cancel
        from onnxport.exporting.passes.transpose import push_transposes

        push_transposes(model)
    model = _export.finish(model, opts, backend="jax", foldable=conv.constant_names, targets=conv.used_targets,
                            fuse_default=True)
    for out, var in zip(model.graph.outputs, closed.jaxpr.outvars):
        if out.dtype is None or out.shape is None:  # a no-op was dropped: the graph output is an earlier value
            conv.annotate(out, var.aval)
    return model
