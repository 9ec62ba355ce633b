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
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir

from . import spec as _spec
from .errors import ConversionError

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


def _attr(name: str, value: Any) -> ir.Attr:
    """An ONNX attribute; the plain Python kinds directly (``convert_attribute`` checks every
    value against the tensor protocols, which dominated exporters' time after tracing)."""
    kind = type(value)
    if kind is int or kind is bool:
        return ir.AttrInt64(name, int(value))
    if kind is float:
        return ir.AttrFloat32(name, value)
    if kind is str:
        return ir.AttrString(name, value)
    if kind is list and value:
        kinds = {type(v) for v in value}
        if kinds <= {int, bool}:
            return ir.AttrInt64s(name, [int(v) for v in value])
        if kinds == {float}:
            return ir.AttrFloat32s(name, value)
        if kinds == {str}:
            return ir.AttrStrings(name, value)
    if isinstance(value, ir.Graph):
        return ir.AttrGraph(name, value)
    return ir.convenience.convert_attribute(name, value)


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
        self.nodes: list[ir.Node] = []
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
        base = base or "v"
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name

    def _node_name(self, base: str) -> str:
        name, i = base, 0
        while name in self._node_names:
            i += 1
            name = f"{base}_{i}"
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
            or (self.parent is not None and value.producer() not in self.nodes)
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
        if not isinstance(tensor, ir.TensorProtocol):
            tensor = ir.tensor(np.asarray(tensor), name=name)
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
        tensor = ir.tensor(arr)
        out = self.op("Constant", value=tensor)
        out.const_value = tensor
        out.dtype = tensor.dtype
        out.shape = ir.Shape(list(arr.shape))
        self._consts[key] = out
        return out

    def ints(self, values: Sequence[Any] | ir.Value) -> ir.Value:
        """A 1-D int64 tensor from ints and 0-d/1-element int64 values (symbolic sizes)."""
        if isinstance(values, ir.Value):
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
        attrs = [_attr(k, _attr_value(v)) for k, v in attributes.items() if v is not None]
        node = ir.Node(
            domain,
            op_type,
            ins,
            attributes=attrs,
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
        return node.outputs[0] if outputs == 1 else tuple(node.outputs)

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
        from . import __version__

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


def check_opset(model: ir.Model) -> None:
    """Raise when a node uses an op that the model's default-domain opset lacks."""
    opset = model.opset_imports.get("", None)
    if opset is None:
        return
    local = {(f.domain, f.name) for f in model.functions.values()}
    from .driver import iter_nodes

    missing: dict[str, list[str]] = {}
    nodes = list(iter_nodes(model.graph))
    for fn in model.functions.values():
        nodes.extend(fn)
    for node in nodes:
        if node.domain or (node.domain, node.op_type) in local:
            continue
        if not _spec.has_spec(node.op_type, opset):
            missing.setdefault(node.op_type, []).append(node.name or "<unnamed>")
    if missing:
        lines = [f"  {op} (first defined after opset {opset}) at {', '.join(ns[:5])}" for op, ns in sorted(missing.items())]
        raise ConversionError(
            f"the exported graph needs ops that opset {opset} lacks; choose a newer opset:\n"
            + "\n".join(lines)
        )
