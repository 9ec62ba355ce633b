"""The compiled form of an imported graph, shared by backends that walk it node by node.

A backend's importer resolves every node to its primitive once (:class:`GraphCompiler`), folds
what depends only on constants into numpy values at import time, picks which float initializers
become trainable weights, and keeps the rest as :class:`Step` objects of a :class:`Program`. At
run time a backend walks the program over an :class:`Env` of framework values. What differs per
framework is a handful of hooks: how a primitive's result is evaluated eagerly for folding, how
a layout conversion is applied, and which exceptions mean "needed a concrete value".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
import onnx_ir as ir

from ..errors import ConversionError, OnnxportError
from ..ir.safety import GROWING_OPS, check_call, fold_fits
from ..plugin.opfacts import NO_FOLD_OPS, RANDOM_OPS
from .plan import ImportPlan, is_statistics, is_weight_use, iter_graphs

#: float element types too narrow to train; initializers of these types stay constants
UNTRAINABLE_FLOATS = ("float8", "float4", "float6")


class Env:
    """Values of one graph run; lookups fall through to the enclosing graph's run (or a dict)."""

    __slots__ = ("vals", "parent")

    def __init__(self, parent: Env | Mapping[ir.Value, Any] | None = None):
        self.vals: dict[ir.Value, Any] = {}
        self.parent = parent

    def __getitem__(self, v: ir.Value) -> Any:
        env: Any = self
        while isinstance(env, Env):
            if v in env.vals:
                return env.vals[v]
            env = env.parent
        if env is not None and v in env:
            return env[v]
        raise ConversionError(f"value {v.name!r} is used before it is computed")

    def __setitem__(self, v: ir.Value, x: Any) -> None:
        self.vals[v] = x


def value_size(x: Any) -> int:
    """Number of elements of a value: an array, a list of arrays (a sequence), or None (0)."""
    if isinstance(x, (list, tuple)):
        return sum(value_size(e) for e in x)
    return int(np.size(x)) if x is not None else 0


def is_static(x: Any) -> bool:
    """Whether ``x`` is known at import/trace time: numpy, Python scalars, strings, None, lists."""
    if x is None or isinstance(x, (np.ndarray, np.generic, int, float, bool, str, bytes)):
        return True
    if isinstance(x, (list, tuple)):
        return all(is_static(e) for e in x)
    return False


class Step:
    """One node: its primitive with context, attributes and compiled subgraphs bound.

    Backends subclass it to set :attr:`tracer_errors`, :meth:`fold`, :meth:`convert_value`,
    :meth:`invoke` and the value readers the call-time budget check uses.
    """

    __slots__ = ("node", "fn", "ctx", "attrs", "subgraphs", "foldable", "inputs", "outputs", "convert")

    #: exceptions that mean the primitive needed a concrete value but got a traced one
    tracer_errors: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(self, node: ir.Node, fn: Callable, ctx: Any, attrs: dict[str, Any],
                 subgraphs: list[tuple[str, list[Program], bool]], foldable: bool):
        self.node = node
        self.fn = fn
        self.ctx = ctx
        self.attrs = attrs
        self.subgraphs = subgraphs
        self.foldable = foldable
        self.inputs = list(node.inputs)
        self.outputs = list(node.outputs)
        self.convert: tuple[str | None, ...] | None = None  # per input, set by a layout plan

    @staticmethod
    def is_static(x: Any) -> bool:
        """Whether an argument is known now (then a foldable step is evaluated eagerly)."""
        return is_static(x)

    @staticmethod
    def convert_value(x: Any, how: str | None) -> Any:
        """Apply a layout conversion (named by the backend's layout plan) to an argument."""
        return x

    @staticmethod
    def shape_of(x: Any) -> Any:
        """A value's shape, for the call-time budget check of ops that grow their input."""
        return np.shape(x)

    @staticmethod
    def array_of(x: Any) -> Any:
        """A concrete value as numpy, for the call-time budget check."""
        return np.asarray(x)

    def invoke(self, args: list[Any], attrs: dict[str, Any]) -> Any:
        """The primitive on its arguments (a backend may wrap it, e.g. in a name scope)."""
        return self.fn(self.ctx, *args, **attrs)

    def fold(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        """Evaluate on static arguments now; the outputs that are concrete come back as numpy."""
        return self.call(args, attrs)

    def call(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        """The primitive's outputs, one per node output (missing trailing ones as None)."""
        if self.ctx.op_type in GROWING_OPS:  # sized before allocating, where the values are concrete
            check_call(self.ctx.op_type, self.ctx.label, args, self.shape_of, self.array_of, self.ctx.const)
        try:
            result = self.invoke(args, attrs)
        except OnnxportError:
            raise
        except self.tracer_errors as exc:
            raise self.ctx.data_dependent("a value it needs concretely") from exc
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

    def run(self, env: Env) -> None:
        args = [env[v] if v is not None else None for v in self.inputs]
        if self.convert is not None:
            args = [self.convert_value(a, how) for a, how in zip(args, self.convert)]
        attrs = self.attrs
        if self.subgraphs:
            attrs = dict(attrs)
            for name, progs, is_list in self.subgraphs:
                bodies = [Body(p, env) for p in progs]
                attrs[name] = bodies if is_list else bodies[0]
        if self.foldable and all(self.is_static(a) for a in args):
            outs = self.fold(args, attrs)
        else:
            outs = self.call(args, attrs)
        for v, o in zip(self.outputs, outs):
            env[v] = o


class Program:
    """A compiled ONNX graph: formal inputs, steps in topological order, outputs."""

    def __init__(self, graph: ir.Graph, steps: list[Step], inputs: list[ir.Value]):
        self.graph = graph
        self.name = graph.name or "graph"
        self.steps = steps
        self.inputs = inputs
        self.outputs = list(graph.outputs)
        self.convert_out: list[str | None] | None = None  # set by a layout plan
        self.hwio: set[ir.Value] = set()  # weights that Convs read HWIO (a layout plan)

    @staticmethod
    def convert_value(x: Any, how: str | None) -> Any:
        """Apply a layout conversion to an output (see :attr:`convert_out`)."""
        return x

    def run(self, env: Env) -> list[Any]:
        for step in self.steps:
            step.run(env)
        if self.convert_out is None:
            return [env[v] for v in self.outputs]
        return [self.convert_value(env[v], how) for v, how in zip(self.outputs, self.convert_out)]


def iter_steps(program: Program) -> Iterator[Step]:
    """Every step of ``program`` and of its subgraphs, depth first."""
    for step in program.steps:
        yield step
        for _, progs, _ in step.subgraphs:
            for p in progs:
                yield from iter_steps(p)


class Body:
    """A subgraph (If branch, Loop/Scan body) bound to its enclosing values.

    ``body(*inputs) -> list of outputs``; it can be called inside a framework's cond/scan/while
    construct (outer values are closed over).
    """

    def __init__(self, program: Program, outer: Env):
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
        from .context import value_shape

        return [value_shape(v) for v in self.program.inputs]

    @property
    def output_shapes(self) -> list[tuple | None]:
        from .context import value_shape

        return [value_shape(v) for v in self.program.outputs]

    def __call__(self, *inputs: Any) -> list[Any]:
        if len(inputs) != self.num_inputs:
            raise ConversionError(
                f"subgraph {self.program.name!r} takes {self.num_inputs} inputs, got {len(inputs)}"
            )
        env = Env(self.outer)
        for v, x in zip(self.program.inputs, inputs):
            env[v] = x
        return self.program.run(env)


class GraphCompiler:
    """Resolves primitives, folds constant subgraphs and picks trainable weights for one import.

    A backend subclass sets :attr:`step_cls`, :attr:`program_cls`, :attr:`context_cls`,
    :attr:`data_dependent_error` and the fold/hoist limits, and :meth:`array_from_ir` (an
    initializer as numpy) and :meth:`holdable` (which folded constants it may hoist).
    """

    step_cls: ClassVar[type[Step]] = Step
    program_cls: ClassVar[type[Program]] = Program
    context_cls: ClassVar[Callable[..., Any]]
    #: raised by a primitive that needs concrete values: the step stays a runtime step
    data_dependent_error: ClassVar[type[BaseException]] = ConversionError
    #: elements; larger folded constants stay runtime computations
    fold_limit: ClassVar[int] = 1 << 26
    #: folded constants of at least this many elements read by runtime steps are hoisted
    hoist_min: ClassVar[int] = 1 << 12

    def __init__(self, plan: ImportPlan, options: Mapping[str, Any], mode: Any):
        self.plan = plan
        self.options = options
        self.mode = mode
        self.static: dict[ir.Value, Any] = {}
        self.params: dict[str, np.ndarray] = {}
        #: non-trainable initializers that training updates (running statistics), held like params
        self.state: dict[str, np.ndarray] = {}
        self.param_values: dict[str, ir.Value] = {}
        self.param_key_of: dict[ir.Value, str] = {}
        self.trainable_mode = options.get("trainable", "auto")
        self.node_count = 0
        self.random = False

    # -- hooks ----------------------------------------------------------------------------
    def array_from_ir(self, tensor: Any) -> np.ndarray:
        """An initializer's value as numpy (raises :class:`OnnxportError` when it cannot)."""
        return np.asarray(tensor.numpy())

    def holdable(self, arr: np.ndarray) -> bool:
        """Whether a folded constant may be hoisted out of the compiled code."""
        return arr.dtype.kind in "fiub" or arr.dtype.name == "bfloat16"

    # -- building -------------------------------------------------------------------------
    def collect_initializers(self) -> None:
        """Sort every initializer (subgraphs too) into :attr:`params` or :attr:`static`."""
        for g in iter_graphs(self.plan.model.graph):
            for v in g.initializers.values():
                if v.const_value is None:
                    continue
                try:
                    arr = self.array_from_ir(v.const_value)
                except OnnxportError as exc:
                    raise ConversionError(f"initializer {v.name!r}: {exc}") from exc
                state = self.is_state(v, arr)
                if state or self.is_param(v, arr):
                    key = v.name or f"param_{len(self.param_values)}"
                    self.param_values[key] = v
                    self.param_key_of[v] = key
                    (self.state if state else self.params)[key] = arr
                else:
                    self.static[v] = arr

    def is_param(self, v: ir.Value, arr: np.ndarray) -> bool:
        """Whether initializer ``v`` becomes a trainable weight (option ``trainable``)."""
        return is_trainable(v, arr, self.trainable_mode)

    def is_state(self, v: ir.Value, arr: np.ndarray) -> bool:
        """Running statistics: no weight, but training updates them (``trainable="auto"`` only)."""
        return (self.trainable_mode == "auto" and arr.dtype.kind == "f" and arr.ndim >= 1
                and not is_weight_use(v) and is_statistics(v))

    def compile(self, graph: ir.Graph) -> Program:
        """The graph's runtime steps; nodes computed from constants alone are folded away."""
        steps = []
        for node in graph:
            step = self._node(node)
            if step is not None:
                steps.append(step)
        return self.program_cls(graph, steps, list(graph.inputs))

    def _node(self, node: ir.Node) -> Step | None:
        info = self.plan.info(node)
        consts = {
            i: v_arr for i, v in enumerate(node.inputs)
            if v is not None and (v_arr := self.static.get(v)) is not None and isinstance(v_arr, np.ndarray)
        }
        param_keys = {i: self.param_key_of[v] for i, v in enumerate(node.inputs) if v in self.param_key_of}
        self.node_count += 1
        self.random |= node.op_type in RANDOM_OPS
        ctx = self.context_cls(node, info.opset, info.version, self.mode, consts, self.node_count, param_keys)
        subgraphs: list[tuple[str, list[Program], bool]] = []
        for name, attr in node.attributes.items():
            if attr.type == ir.AttributeType.GRAPH:
                subgraphs.append((name, [self.compile(attr.value)], False))
            elif attr.type == ir.AttributeType.GRAPHS:
                subgraphs.append((name, [self.compile(g) for g in attr.value], True))
        step = self.new_step(node, info.primitive.fn, ctx, dict(info.attributes), subgraphs)
        if (step.foldable and all(v is None or v in self.static for v in node.inputs)
                and fold_fits(node.op_type, [None if v is None else self.static[v] for v in node.inputs],
                              np.shape, np.asarray, self.fold_limit)):
            env = Env(self.static)
            try:
                step.run(env)
            except self.data_dependent_error:
                return step
            outs = [env.vals.get(v) for v in node.outputs]
            if all(o is None or (step.is_static(o) and value_size(o) <= self.fold_limit) for o in outs):
                for v, o in zip(node.outputs, outs):
                    if o is not None or v in env.vals:  # None is a value too: an empty optional
                        self.static[v] = o
                return None
        return step

    def new_step(self, node: ir.Node, fn: Callable, ctx: Any, attrs: dict[str, Any],
                 subgraphs: list[tuple[str, list[Program], bool]]) -> Step:
        """The step of one node (a backend may add facts to it)."""
        return self.step_cls(node, fn, ctx, attrs, subgraphs, foldable(node))

    def hoist(self, program: Program) -> dict[str, ir.Value]:
        """Large folded constants read by runtime steps: ``{key: value}`` (keys unique among
        themselves and the weights; the arrays stay in :attr:`static`)."""
        values: dict[str, ir.Value] = {}
        seen: set[ir.Value] = set()
        for step in iter_steps(program):
            for v in step.inputs:
                if v is None or v in seen or v in self.param_key_of:
                    continue
                arr = self.static.get(v)
                if not isinstance(arr, np.ndarray) or arr.size < self.hoist_min or not self.holdable(arr):
                    continue
                seen.add(v)
                key = v.name or f"const_{len(values)}"
                while key in values or key in self.param_values:
                    key += "_"
                values[key] = v
        return values


def foldable(node: ir.Node) -> bool:
    """Whether a node may be evaluated at import time when its inputs are constants: not a
    random/stateful op (``opfacts.NO_FOLD_OPS``) and no subgraph attribute."""
    if node.op_type in NO_FOLD_OPS:
        return False
    return not any(a.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS) for a in node.attributes.values())


def is_trainable(v: ir.Value, arr: np.ndarray, mode: str = "auto") -> bool:
    """Whether initializer ``v`` with value ``arr`` becomes a trainable weight.

    ``mode``: ``"none"`` (never), ``"all"`` (every float initializer), ``"auto"`` (float
    initializers of rank >= 1 that a weight input of some node reads). Integer, bool and
    8/6/4-bit float initializers never train.
    """
    if arr.dtype.kind != "f" and arr.dtype.name != "bfloat16":
        return False
    if arr.dtype.name.startswith(UNTRAINABLE_FLOATS):
        return False
    if mode == "none":
        return False
    if mode == "all":
        return True
    return arr.ndim >= 1 and is_weight_use(v)
