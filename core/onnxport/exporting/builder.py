"""A small graph builder for export primitives: values, initializers, nodes, scopes.

Framework-free: a backend's exporter drives one :class:`Builder` per graph and hands it to
each export primitive as ``g``. Primitives write ``g.op("Conv", x, w, b, strides=[1, 1])``;
they never see protobuf. The result is an ``onnx_ir.Model``.

Naming: while a scope is open (:meth:`Builder.scope`), the nodes created get that scope's name
(``layer1.0.conv1/convolution``; several nodes get ``.../Conv_0`` style suffixes) and the
scope's metadata (``metadata_props``), and new values get names derived from it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Container, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir

from ..errors import ConversionError
from ..plugin import spec as _spec

_NUMPY = {
    ir.DataType.FLOAT: np.float32,
    ir.DataType.DOUBLE: np.float64,
    ir.DataType.FLOAT16: np.float16,
    ir.DataType.INT64: np.int64,
    ir.DataType.INT32: np.int32,
    ir.DataType.INT16: np.int16,
    ir.DataType.INT8: np.int8,
    ir.DataType.UINT8: np.uint8,
    ir.DataType.BOOL: np.bool_,
}


def _attr_value(value: Any) -> Any:
    """Normalize an attribute value for ``ir.convenience.convert_attributes``."""
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, np.ndarray):
        return ir.tensor(value)
    if isinstance(value, (np.integer, np.bool_)):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def array_tensor(value: Any, name: str | None = None) -> Any:
    """``ir.tensor(value, name=name)``, without its protocol checks for a numpy array (the
    same ``ir.Tensor``; runtime protocol ``isinstance`` checks cost most of a small export)."""
    if type(value) is np.ndarray:
        return ir.Tensor(value, name=name)
    return ir.tensor(value, name=name)


def is_tensor(value: Any) -> bool:
    """``isinstance(value, ir.TensorProtocol)``, answered by the concrete class first."""
    if isinstance(value, (np.ndarray, np.generic, list, tuple, int, float)):
        return False  # the common non-tensors, without the runtime protocol check
    return isinstance(value, ir.Tensor) or isinstance(value, ir.TensorProtocol)


_INT_TYPES = (bool, int, np.integer, np.bool_)
_FLOAT_TYPES = (float, np.floating)


def attribute(name: str, value: Any) -> ir.Attr:
    """An ``ir.Attr`` of the type a Python value implies (as ``ir.convenience.convert_attribute``
    does; plain numbers, strings, their lists and arrays take a direct path)."""
    if isinstance(value, _INT_TYPES):
        return ir.AttrInt64(name, int(value))
    if isinstance(value, _FLOAT_TYPES):
        return ir.AttrFloat32(name, float(value))
    if isinstance(value, str):
        return ir.AttrString(name, value)
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(v, _INT_TYPES) for v in value):
            return ir.AttrInt64s(name, [int(v) for v in value])
        if all(isinstance(v, (*_INT_TYPES, *_FLOAT_TYPES)) for v in value):
            return ir.AttrFloat32s(name, [float(v) for v in value])
        if all(isinstance(v, str) for v in value):
            return ir.AttrStrings(name, list(value))
    if type(value) is np.ndarray:
        return ir.AttrTensor(name, array_tensor(value))
    if isinstance(value, ir.Tensor):
        return ir.AttrTensor(name, value)
    if isinstance(value, ir.Graph):
        return ir.AttrGraph(name, value)
    return ir.convenience.convert_attribute(name, _attr_value(value))




def first_free(base: str, taken: Container[str]) -> str:
    """``base``, or ``base_1``, ``base_2`` ..., the first that ``taken`` does not hold."""
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name

class _Scope:
    """The naming context of one framework op: node names, value names and metadata."""

    def __init__(self, name: str, metadata: Mapping[str, str]):
        self.name = name
        self.metadata = dict(metadata)
        self.nodes: list[ir.Node] = []


class Builder:
    """Builds one ONNX graph (the main graph or a subgraph) for an exporter.

    :param opset: the default-domain opset the model targets; primitives may read ``g.opset``.
    :param name: the graph's name.
    :param parent: the enclosing builder when this one builds a subgraph (If/Loop body); names
        stay unique across the whole model and initializers live in the main graph.
    """

    def __init__(self, opset: int, *, name: str = "main_graph", parent: Builder | None = None):
        self.opset = opset
        self.name = name
        self.parent = parent
        #: the nodes in order; add with :meth:`op`, take out with :meth:`remove_node`
        self.nodes: list[ir.Node] = []
        self._node_set: set[ir.Node] = set()
        self.inputs: list[ir.Value] = []
        self.outputs: list[ir.Value] = []
        self.opset_imports: dict[str, int] = {"": opset} if parent is None else parent.opset_imports
        self._initializers: dict[str, ir.Value] = {} if parent is None else parent._initializers
        self._init_keys: dict[Any, ir.Value] = {} if parent is None else parent._init_keys
        self._names: set[str] = set() if parent is None else parent._names
        self._node_names: set[str] = set() if parent is None else parent._node_names
        self._consts: dict[tuple[Any, ...], ir.Value] = {}
        self._scope: _Scope | None = None
        self.functions: dict[tuple[str, str, str], ir.Function] = (
            {} if parent is None else parent.functions
        )

    # -- names ------------------------------------------------------------------------------
    def unique_name(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2`` ... whichever is not yet used in the model."""
        name = first_free(base or "v", self._names)
        self._names.add(name)
        return name

    def fresh(self, base: str) -> str:
        """A value name not used in the model yet, not claimed: for :meth:`input` (which claims it)."""
        return first_free(base or "v", self._names)

    def _node_name(self, base: str) -> str:
        name = first_free(base, self._node_names)
        self._node_names.add(name)
        return name

    def _claim(self, name: str) -> str:
        if name in self._names:
            raise ConversionError(f"value name {name!r} is used twice in graph {self.name!r}")
        self._names.add(name)
        return name

    # -- graph inputs, outputs, initializers ------------------------------------------------------
    def input(self, name: str, dtype: ir.DataType, shape: Sequence[int | str | None] | None) -> ir.Value:
        """Add a graph input; symbolic dims are given as strings (or None for unknown)."""
        value = ir.Value(
            name=self._claim(name),
            type=ir.TensorType(dtype),
            shape=None if shape is None else ir.Shape(list(shape)),
        )
        self.inputs.append(value)
        return value

    def output(self, value: ir.Value, name: str | None = None) -> ir.Value:
        """Make ``value`` a graph output (through an Identity when it cannot be one directly)."""
        needs_copy = (
            value.is_graph_input()
            or value.is_initializer()
            or value in self.outputs
            or value in self.inputs
            or (self.parent is not None and not self.owns(value.producer()))
            or value.name in self._initializers
        )
        if needs_copy:
            src, value = value, self.op("Identity", value)
            value.dtype, value.shape = src.dtype, src.shape
        if name is not None and value.name != name:
            self._names.discard(value.name)
            value.name = self.unique_name(name)
        self.outputs.append(value)
        return value

    def initializer(self, name: str, tensor: Any, *, key: Any = None) -> ir.Value:
        """An initializer named ``name`` holding ``tensor`` (an ``ir.TensorProtocol`` or array).

        ``key`` identifies the underlying storage: a second call with the same key returns the
        first value (tied weights, a layer applied twice: one initializer).
        """
        if self.parent is not None:
            return self.parent.initializer(name, tensor, key=key)
        if key is not None and key in self._init_keys:
            return self._init_keys[key]
        if not is_tensor(tensor):
            tensor = array_tensor(np.asarray(tensor), name=name)
        value = ir.Value(
            name=self._claim(name),
            type=ir.TensorType(tensor.dtype),
            shape=ir.Shape(list(tensor.shape)),
            const_value=tensor,
        )
        self._initializers[name] = value
        if key is not None:
            self._init_keys[key] = value
        return value

    # -- constants --------------------------------------------------------------------------
    def const(self, value: Any, dtype: ir.DataType | None = None) -> ir.Value:
        """A Constant node holding ``value`` (reused when the same constant is asked again)."""
        np_dtype = _NUMPY.get(dtype) if dtype is not None else None
        if dtype is not None and np_dtype is None:
            raise ConversionError(f"constants of type {dtype} are not supported by the builder")
        arr = np.asarray(value, dtype=np_dtype)
        if arr.dtype == np.float64 and dtype is None:
            arr = arr.astype(np.float32)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key in self._consts:
            return self._consts[key]
        tensor = array_tensor(arr)
        out = self.op("Constant", value=tensor)
        out.const_value = tensor
        out.dtype = tensor.dtype
        out.shape = ir.Shape(list(arr.shape))
        self._consts[key] = out
        return out

    def ints(self, values: Sequence[Any] | ir.Value) -> ir.Value:
        """A 1-D int64 tensor from ints and 0-d/1-element int64 values (symbolic sizes)."""
        if not isinstance(values, (list, tuple)) and isinstance(values, ir.Value):
            return values
        if all(isinstance(v, (int, np.integer)) for v in values):
            return self.const(np.asarray(values, dtype=np.int64))
        parts: list[ir.Value] = []
        run: list[int] = []
        for v in values:
            if isinstance(v, (int, np.integer)):
                run.append(int(v))
                continue
            if run:
                parts.append(self.const(np.asarray(run, dtype=np.int64)))
                run = []
            parts.append(self.as_1d(v))
        if run:
            parts.append(self.const(np.asarray(run, dtype=np.int64)))
        return parts[0] if len(parts) == 1 else self.op("Concat", *parts, axis=0)

    def as_1d(self, v: ir.Value) -> ir.Value:
        """A scalar int value as a 1-element vector (unchanged when already 1-D)."""
        if v.shape is not None and len(v.shape) == 1:
            return v
        if v.dtype is not None and v.dtype != ir.DataType.INT64:
            v = self.op("Cast", v, to=ir.DataType.INT64)
        return self.op("Unsqueeze", v, self.const(np.asarray([0], dtype=np.int64)))

    def cast(self, value: ir.Value, dtype: ir.DataType) -> ir.Value:
        """``value`` as ``dtype`` (no node when it already has that type)."""
        if value.dtype == dtype:
            return value
        out = self.op("Cast", value, to=dtype)
        out.dtype = dtype
        out.shape = value.shape
        return out

    # -- nodes --------------------------------------------------------------------------------
    def op(
        self,
        op_type: str,
        *inputs: ir.Value | None,
        domain: str = "",
        outputs: int = 1,
        version: int | None = None,
        **attributes: Any,
    ) -> Any:
        """Add a node; returns its output value, or a tuple when ``outputs`` > 1.

        Keyword arguments are ONNX attributes (None values are left out). Trailing None
        inputs are dropped; inner None inputs become empty (missing optional) inputs.
        """
        ins = list(inputs)
        while ins and ins[-1] is None:
            ins.pop()
        for i, v in enumerate(ins):
            if v is not None and not isinstance(v, ir.Value):
                raise ConversionError(
                    f"{self._where()}: input {i} of {op_type} is {type(v).__name__}, not a value "
                    "(wrap Python constants with g.const)"
                )
        node = ir.Node(
            domain,
            op_type,
            ins,
            attributes=[attribute(k, v) for k, v in attributes.items() if v is not None],
            num_outputs=outputs,
            version=version,
        )
        base = self._scope.name.rsplit("/", 1)[-1] if self._scope else op_type.lower()
        for i, out in enumerate(node.outputs):
            out.name = self.unique_name(f"{base}_{op_type.lower()}" if outputs == 1 else f"{base}_{op_type.lower()}_{i}")
        if self._scope is not None:
            self._scope.nodes.append(node)
            node.metadata_props.update(self._scope.metadata)
        else:
            node.name = self._node_name(f"node_{op_type}")
        if domain and domain not in self.opset_imports:
            self.opset_imports[domain] = 1
        self.nodes.append(node)
        self._node_set.add(node)
        return node.outputs[0] if outputs == 1 else tuple(node.outputs)

    def owns(self, node: ir.Node | None) -> bool:
        """Whether ``node`` is one of this graph's nodes (in constant time)."""
        return node is not None and node in self._node_set

    def remove_node(self, node: ir.Node) -> None:
        """Take a node this builder made out of its graph again (it must be unused)."""
        self.nodes.remove(node)
        self._node_set.discard(node)

    @contextlib.contextmanager
    def scope(self, name: str, metadata: Mapping[str, str] | None = None) -> Iterator[_Scope]:
        """Name the nodes created inside: one node gets ``name``, several ``name/OpType_i``."""
        outer = self._scope
        self._scope = _Scope(name, metadata or {})
        try:
            yield self._scope
        finally:
            sc, self._scope = self._scope, outer
            if len(sc.nodes) == 1:
                sc.nodes[0].name = self._node_name(sc.name)
            else:
                for node in sc.nodes:
                    node.name = self._node_name(f"{sc.name}/{node.op_type}")

    def rename(self, value: ir.Value, name: str) -> None:
        """Give a produced value a chosen (unique) name."""
        self._names.discard(value.name)
        value.name = self.unique_name(name)

    def _where(self) -> str:
        return f"graph {self.name!r}" + (f", scope {self._scope.name!r}" if self._scope else "")

    def error(self, message: str) -> ConversionError:
        """An error naming where the builder is (exporters name the traced op instead)."""
        return ConversionError(f"{self._where()}: {message}")

    # -- shape helpers --------------------------------------------------------------------------
    def rank(self, v: ir.Value) -> int:
        """The rank of ``v``; raises :meth:`error` when it is unknown."""
        if v.shape is None:
            raise self.error(f"the rank of value {v.name!r} is unknown")
        return len(v.shape)

    @staticmethod
    def axis(dim: int, rank: int) -> int:
        """A possibly negative dim as a non-negative axis (0-d tensors accept -1 and 0)."""
        return dim + max(rank, 1) if dim < 0 else dim

    def dim_size(self, x: ir.Value, axis: int) -> int | ir.Value:
        """The size of ``x`` along ``axis``: an int when static, else a 1-element int64 value."""
        if x.shape is not None and isinstance(x.shape[axis], int):
            return x.shape[axis]
        shape = self.op("Shape", x)
        return self.op("Gather", shape, self.const(np.asarray([axis], dtype=np.int64)), axis=0)

    def scalar(self, value: Any, dtype: ir.DataType) -> ir.Value:
        """A 0-d constant of ``dtype`` (Python numbers) or a value cast to ``dtype``."""
        if isinstance(value, ir.Value):
            return self.cast(value, dtype)
        if dtype == ir.DataType.BFLOAT16:
            return self.cast(self.const(np.asarray(value, dtype=np.float32)), dtype)
        return self.const(np.asarray(value), dtype)

    # -- subgraphs, functions, result -----------------------------------------------------------
    def subgraph(self, name: str) -> Builder:
        """A builder for a subgraph (If branch, Loop body) nested in this one."""
        return Builder(self.opset, name=self.unique_name(name), parent=self)

    def graph(self) -> ir.Graph:
        """The built graph (for a subgraph: without initializers, which live in the main graph)."""
        used = {id(v) for n in self._all_nodes() for v in n.inputs if v is not None}
        used |= {id(v) for v in self.outputs}
        inits = (
            [v for v in self._initializers.values() if id(v) in used] if self.parent is None else []
        )
        return ir.Graph(
            self.inputs,
            self.outputs,
            nodes=self.nodes,
            initializers=inits,
            opset_imports=dict(self.opset_imports) if self.parent is None else None,
            name=self.name,
        )

    def _all_nodes(self) -> Iterator[ir.Node]:
        stack = list(self.nodes)
        while stack:
            node = stack.pop()
            yield node
            for attr in node.attributes.values():
                if attr.type == ir.AttributeType.GRAPH:
                    stack.extend(attr.value)
                elif attr.type == ir.AttributeType.GRAPHS:
                    for sub in attr.value:
                        stack.extend(sub)
        for fn in self.functions.values():
            yield from fn

    def model(self, *, producer: str = "onnxport", producer_version: str | None = None) -> ir.Model:
        """The finished model: graph, used initializers, opset imports and local functions."""
        if self.parent is not None:
            raise ConversionError("model() is called on the main graph's builder, not a subgraph")
        from .._version import __version__

        return ir.Model(
            self.graph(),
            ir_version=_ir_version(self.opset),
            producer_name=producer,
            producer_version=producer_version or __version__,
            functions=list(self.functions.values()),
        )


def _ir_version(opset: int) -> int:
    """The IR version onnx pairs with ``opset`` (what ``onnx.helper`` would write)."""
    import onnx.helper

    best = 7
    for _, ir_v, ai_onnx, *_ in onnx.helper.VERSION_TABLE:
        if ai_onnx == opset:
            return ir_v
        if ai_onnx < opset:
            best = max(best, ir_v)
    return best


#: standard domains whose nodes :func:`check_opset` checks against ``onnx.defs``
_CHECKED_DOMAINS = ("", "ai.onnx.ml")


def check_opset(model: ir.Model) -> None:
    """Raise when a node does not fit its op's schema at the model's opset.

    An op the opset lacks is named with where it is used; a node whose form is another
    version's (more or fewer inputs or outputs than the schema allows, an attribute the schema
    lacks or types differently, a required attribute missing: a missing down-adapter) is named
    with what does not fit. Function bodies are checked at the function's own opsets.
    """
    local = {(f.domain, f.name) for f in model.functions.values()}
    from ..ir.walk import iter_graphs

    missing: dict[str, list[str]] = {}
    misfits: list[str] = []
    scopes: list[tuple[Mapping[str, int], Iterator[ir.Graph]]] = [(model.opset_imports, iter_graphs(model.graph))]
    for fn in model.functions.values():
        scopes.append(({**model.opset_imports, **fn.opset_imports}, iter_graphs(fn.graph)))
    for opsets, graphs in scopes:
        for graph in graphs:
            for node in graph:
                domain = _spec.normalize_domain(node.domain)
                opset = opsets.get(domain, opsets.get("ai.onnx") if domain == "" else None)
                if domain not in _CHECKED_DOMAINS or opset is None or (node.domain, node.op_type) in local:
                    continue
                if not _spec.has_spec(node.op_type, opset, domain):
                    missing.setdefault(node.op_type, []).append(node.name or "<unnamed>")
                    continue
                problem = _form_problem(node, opset, domain)
                if problem:
                    misfits.append(problem)
    if missing:
        opset = model.opset_imports.get("", "?")
        lines = [f"  {op} (first defined after opset {opset}) at {', '.join(ns[:5])}" for op, ns in sorted(missing.items())]
        raise ConversionError(
            f"the exported graph needs ops that opset {opset} lacks; choose a newer opset:\n"
            + "\n".join(lines)
        )
    if misfits:
        more = f"\n  ... and {len(misfits) - 10} more" if len(misfits) > 10 else ""
        raise ConversionError(
            "the exported graph has nodes in a form their op's schema at the model's opset does not "
            "define (a missing down-adapter?):\n" + "\n".join(f"  {m}" for m in misfits[:10]) + more
        )


def _form_problem(node: ir.Node, opset: int, domain: str) -> str | None:
    """What about ``node`` does not fit its op's schema at ``opset`` (None: it fits)."""
    form = _form(node.op_type, opset, domain)
    since, min_in, max_in, min_out, max_out, attrs, required = form
    n_in = len(node.inputs)
    while n_in and node.inputs[n_in - 1] is None:
        n_in -= 1  # trailing omitted optional inputs are no inputs
    n_out = len(node.outputs)
    problem = None
    if n_in > max_in or n_in < min_in:
        problem = f"{n_in} inputs; the schema takes {_count(min_in, max_in)}"
    elif n_out > max_out or n_out < min_out:
        problem = f"{n_out} outputs; the schema gives {_count(min_out, max_out)}"
    else:
        for name, attr in node.attributes.items():
            want = attrs.get(name)
            if want is None:
                problem = f"attribute {name!r}, which the schema does not define"
            elif not attr.is_ref() and int(attr.type) != want[0]:
                problem = f"attribute {name!r} is {attr.type.name}; the schema says {want[1]}"
            if problem:
                break
        else:
            missing = [name for name in required if name not in node.attributes]
            if missing:
                problem = f"lacks the required attribute {missing[0]!r}"
    if problem is None:
        return None
    return f"node {node.name or '<unnamed>'!r} ({node.op_type}, schema {node.op_type}-{since} at opset {opset}): {problem}"


@functools.cache
def _form(op_type: str, opset: int, domain: str) -> tuple[Any, ...]:
    """The parts of a schema :func:`_form_problem` reads, as plain Python (read once per op)."""
    schema = _schema(op_type, opset, domain)
    attrs = {name: (int(a.type.value), a.type.name) for name, a in schema.attributes.items()}
    required = tuple(name for name, a in schema.attributes.items() if a.required)
    return (schema.since_version, schema.min_input, schema.max_input, schema.min_output, schema.max_output,
            attrs, required)


@functools.cache
def _schema(op_type: str, opset: int, domain: str) -> Any:
    import onnx.defs

    return onnx.defs.get_schema(op_type, opset, domain)


def _count(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"at least {low}" if high >= 2**31 - 1 else f"{low} to {high}"
