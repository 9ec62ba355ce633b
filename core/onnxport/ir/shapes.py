"""ONNX shape inference on an IR model: linear in its size, bounded, and strict about lies.

A declared type (graph output, ``value_info``) that contradicts what the graph computes is
refused with a :class:`ModelError` naming the value; ``strict=False`` loads such a model with a
warning. Other inference failures (ops without inference, unknown domains) are not errors: the
primitives handle unknown shapes.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator

import onnx
import onnx_ir as ir

from ..errors import ModelError
from .validate import tensor_nbytes

#: initializers larger than this are passed to inference as typed inputs, without their data
_INLINE_BYTES = 1000
#: a declared dimension past this turns data propagation off (it would materialize such shapes)
_DATA_PROP_DIM = 1 << 24
_CONTRADICTION = re.compile(r"(differs from existing|Inferred shape and existing shape differ|"
                            r"existing elem type|type mismatch|has inconsistent type|"
                            # a declared type an op's schema does not take (a value_info lie upstream)
                            r"has unsupported type)", re.IGNORECASE)


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    yield graph
    for n in graph.node:
        for a in n.attribute:
            if a.HasField("g"):
                yield from _graphs(a.g)
            for g in a.graphs:
                yield from _graphs(g)


def _ir_graphs(graph: ir.Graph) -> Iterator[ir.Graph]:
    yield graph
    for node in graph:
        for attr in node.attributes.values():
            if attr.type == ir.AttributeType.GRAPH:
                yield from _ir_graphs(attr.value)
            elif attr.type == ir.AttributeType.GRAPHS:
                for g in attr.value:
                    yield from _ir_graphs(g)


def _proto(model: ir.Model) -> onnx.ModelProto:
    """The model without large initializer data (those become typed graph inputs)."""
    graph = model.graph
    original_inputs = list(graph.inputs)
    present = set(original_inputs)
    removed: list[tuple[ir.Value, ir.TensorProtocol | None]] = []
    for v in list(graph.initializers.values()):
        tensor = v.const_value
        if tensor is not None:
            v.shape = v.shape if v.shape is not None else tensor.shape
            v.dtype = v.dtype if v.dtype is not None else tensor.dtype
        if v not in present:
            graph.inputs.append(v)
            present.add(v)
        if tensor is None or tensor.nbytes > _INLINE_BYTES:
            removed.append((v, tensor))
            v.const_value = None
            graph.initializers.pop(v.name)
    try:
        return ir.serde.serialize_model(model)
    finally:
        graph.inputs.clear()
        graph.inputs.extend(original_inputs)
        for v, tensor in removed:
            v.const_value = tensor
            if tensor is not None:
                graph.register_initializer(v)
            else:
                graph.initializers[v.name] = v


def _from_source(model: ir.Model, source: onnx.ModelProto) -> onnx.ModelProto | None:
    """What :func:`_proto` makes of ``model``, built from the proto it was loaded from (a copy of
    its nodes and types; protobuf copies, no Python per node) when that gives the same
    inference: no functions or subgraphs, and every ``value_info`` names a value a node
    computes, once, that is no graph output (onnx-ir drops or merges other entries). None: not so.
    """
    graph, src = model.graph, source.graph
    if (model.functions or source.functions or src.sparse_initializer or len(src.node) != len(graph)
            or len(src.initializer) != len(graph.initializers)):
        return None
    graph_kinds = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    for node in src.node:  # the proto's nodes are the graph's: read there, where it is cheaper
        if node.attribute and any(a.type in graph_kinds or a.HasField("g") or a.graphs for a in node.attribute):
            return None
    declared = [vi.name for vi in src.value_info]
    if declared:
        outputs = {vi.name for vi in src.output}
        computed = {name for node in src.node for name in node.output if name and name not in outputs}
        if len(set(declared)) != len(declared) or not computed.issuperset(declared):
            return None
    inputs = {vi.name for vi in src.input}
    inits = graph.initializers
    small: list[onnx.TensorProto] = []
    typed: list[onnx.TensorProto] = []
    for t in src.initializer:
        name = t.name
        if name in inputs:
            v = inits.get(name)
            if v is None or v.shape is None or v.dtype is None:
                return None  # _proto would fill in the input's type from its tensor
        else:  # onnx-ir typed the value as its tensor, as the proto's typed input is
            typed.append(t)
        if t.data_type == onnx.TensorProto.STRING:
            v = inits.get(name)
            nbytes = v.const_value.nbytes if v is not None and v.const_value is not None else _INLINE_BYTES + 1
        else:  # raw_data or the tensor's type and shape (checked against each other at load)
            raw = t.raw_data
            nbytes = len(raw) if raw else tensor_nbytes(t)
        if nbytes <= _INLINE_BYTES:
            small.append(t)
    proto = onnx.ModelProto()
    proto.ir_version = source.ir_version
    proto.opset_import.extend(source.opset_import)
    g = proto.graph
    g.name = src.name
    g.input.extend(src.input)
    g.MergeFromString(_typed_inputs(typed))  # initializers are typed graph inputs, as in _proto
    g.initializer.extend(small)
    g.node.extend(src.node)
    g.value_info.extend(src.value_info)
    g.output.extend(src.output)
    return proto


def _type_bytes(data_type: int, dims: tuple[int, ...]) -> bytes:
    """A serialized ``TypeProto``: a tensor of ``data_type`` and ``dims`` (a shape even for no dims)."""
    type_proto = onnx.TypeProto()
    tt = type_proto.tensor_type
    tt.elem_type = data_type
    tt.shape.SetInParent()
    for d in dims:
        tt.shape.dim.add(dim_value=d)
    return type_proto.SerializeToString()


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]
_GRAPH_INPUT = _varint(11 << 3 | 2)  # GraphProto.input, length-delimited
_VI_NAME, _VI_TYPE = _varint(1 << 3 | 2), _varint(2 << 3 | 2)  # ValueInfoProto.name, .type


def _typed_inputs(tensors: list[onnx.TensorProto]) -> bytes:
    """Serialized ``GraphProto.input`` entries: each tensor as a graph input of its type and shape
    (written as wire format, each distinct type once: a message built per tensor costs more)."""
    types: dict[tuple[int, tuple[int, ...]], bytes] = {}
    parts: list[bytes] = []
    for t in tensors:
        key = (t.data_type, tuple(t.dims))
        typed = types.get(key)
        if typed is None:
            type_bytes = _type_bytes(*key)
            typed = types[key] = _VI_TYPE + _varint(len(type_bytes)) + type_bytes
        name = t.name.encode()
        size = _varint(len(name))
        parts += (_GRAPH_INPUT, _varint(1 + len(size) + len(name) + len(typed)), _VI_NAME, size, name, typed)
    return b"".join(parts)


def _huge_dims(proto: onnx.ModelProto, flat: bool = False) -> bool:
    """Whether a declared dimension passes :data:`_DATA_PROP_DIM` (``flat``: the proto has no subgraphs)."""
    for g in ((proto.graph,) if flat else _graphs(proto.graph)):
        for vi in (*g.input, *g.output, *g.value_info):
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_value > _DATA_PROP_DIM:  # 0 where the dimension is symbolic or unknown
                    return True
    return False


def _merge(model: ir.Model, inferred: onnx.ModelProto) -> None:
    """Give each value of ``model`` the tensor type and shape the inferred proto holds for its name
    (graph inputs, ``value_info`` and outputs of every graph; outer values first)."""
    values: dict[str, ir.Value] = {}
    keep = values.setdefault
    nested = _collect_values(model.graph, keep)
    # each distinct type read from the proto once (most values of a long graph share a few
    # types): deserializing a value per value_info costs most of the import of a long graph.
    # Values of one shape share one frozen ir.Shape (as onnx-ir's initializers share their tensor's)
    parsed: dict[bytes, tuple[tuple[int | str | None, ...] | None, ir.Shape | None, ir.DataType | None]] = {}
    find = values.get
    for g in (_graphs(inferred.graph) if nested else (inferred.graph,)):
        for vi in (*g.input, *g.value_info, *g.output):
            v = find(vi.name)
            if v is None:
                continue
            type_proto = vi.type
            key = type_proto.SerializeToString()
            found = parsed.get(key)
            if found is None:
                found = parsed[key] = _tensor_type(type_proto)
            dims, shape, dtype = found
            if shape is not None:
                current = v.shape
                if current is not shape and (current is None or _dims(current) != dims):
                    v.shape = shape
            if dtype is not None and dtype != v.dtype:
                v.dtype = dtype


def _collect_values(graph: ir.Graph, keep) -> bool:
    """``keep(name, value)`` for the inputs and node outputs of ``graph``, then of its subgraphs
    (depth first, in node order); whether it has subgraphs."""
    subgraphs: list[ir.Graph] = []
    for v in graph.inputs:
        keep(v.name, v)
    for node in graph:
        for v in node.outputs:
            if v.name:
                keep(v.name, v)
        attrs = node.attributes
        if attrs:
            for attr in attrs.values():
                if attr.type == ir.AttributeType.GRAPH:
                    subgraphs.append(attr.value)
                elif attr.type == ir.AttributeType.GRAPHS:
                    subgraphs.extend(attr.value)
    for g in subgraphs:
        _collect_values(g, keep)
    return bool(subgraphs)


def _tensor_type(type_proto: onnx.TypeProto) -> tuple[tuple[int | str | None, ...] | None, ir.Shape | None,
                                                   ir.DataType | None]:
    """The dims and frozen shape (None: no shape) and the dtype (None: none) of a tensor type;
    all None for other types."""
    if not type_proto.HasField("tensor_type"):
        return None, None, None
    tt = type_proto.tensor_type
    dims = (tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim)
            if tt.HasField("shape") else None)
    return (dims, None if dims is None else ir.Shape(dims, frozen=True),
            ir.DataType(tt.elem_type) if tt.elem_type else None)


def _dims(shape: ir.Shape) -> tuple[int | str | None, ...]:
    return tuple(d if isinstance(d, int) else d.value for d in shape)


def _forget_declared(model: ir.Model, proto: onnx.ModelProto) -> None:
    for g in _graphs(proto.graph):
        del g.value_info[:]
    for g in _ir_graphs(model.graph):
        outputs = set(g.outputs)
        for node in g:
            for v in node.outputs:
                if v not in outputs:
                    v.type = None
                    v.shape = None


def infer_shapes(model: ir.Model, strict: bool = True, source: onnx.ModelProto | None = None) -> None:
    """Fill in dtypes and shapes; refuse (``strict``) or warn about declared types the graph contradicts.

    ``source``: the proto ``model`` was loaded from, if the graph is unchanged since (faster).
    """
    proto = _from_source(model, source) if source is not None else None
    flat = proto is not None  # the source's proto is used only for a graph without subgraphs
    if proto is None:
        try:
            proto = _proto(model)
        except Exception:  # noqa: BLE001 - a model onnx-ir cannot serialize gets no inferred shapes
            return
    data_prop = not _huge_dims(proto, flat)
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True, data_prop=data_prop)
    except Exception as exc:  # noqa: BLE001 - see below: only contradictions are the model's fault
        message = str(exc)
        if _CONTRADICTION.search(message):
            text = f"the model declares a type the graph contradicts: {message.strip()[:600]}"
            if strict:
                raise ModelError(text + " (import with strict=False to load it anyway)") from exc
            warnings.warn(text + "; the declared types of intermediate values are ignored", stacklevel=3)
            _forget_declared(model, proto)  # what the graph computes wins: no value is cast to a lie
        try:
            inferred = onnx.shape_inference.infer_shapes(proto, check_type=False, strict_mode=False,
                                                         data_prop=data_prop)
        except Exception:  # noqa: BLE001 - inference is a best-effort aid; primitives handle unknowns
            return
    _merge(model, inferred)
