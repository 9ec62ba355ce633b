"""One check of an untrusted ``ModelProto`` before anything reads its tensors, names or attributes.

Run by :func:`onnxport.ir.io.load_proto` on every path, bytes or proto. Every problem is a
:class:`ModelError` naming the tensor, value, node or function and what was found.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator

import onnx
from onnx import AttributeProto, TensorProto

from ..errors import ModelError

_INT32_MAX = 2**31 - 1
_DATA_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
_BITS = {TensorProto.UINT4: 4, TensorProto.INT4: 4, TensorProto.FLOAT4E2M1: 4}
for _name in ("UINT2", "INT2"):
    if hasattr(TensorProto, _name):
        _BITS[getattr(TensorProto, _name)] = 2
for _name in ("FLOAT6E2M3", "FLOAT6E3M2"):
    if hasattr(TensorProto, _name):
        _BITS[getattr(TensorProto, _name)] = 6
_KNOWN_DTYPES = {v for k, v in TensorProto.DataType.items() if v != TensorProto.UNDEFINED}
#: the names a model may give the default domain
DEFAULT_DOMAINS = ("", "ai.onnx")


def _dtype_name(code: int) -> str:
    try:
        return TensorProto.DataType.Name(code)
    except ValueError:
        return f"<unknown data type {code}>"


#: bits per element of each data type asked for so far (numpy's answer, asked once per type)
_BITS_OF: dict[int, int] = dict(_BITS)


def _bits(code: int) -> int:
    bits = _BITS_OF.get(code)
    if bits is None:
        import numpy as np

        bits = _BITS_OF[code] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code)).itemsize * 8
    return bits


#: bytes per element of the known data types that raw_data stores whole bytes of (not strings, not packed)
_ITEMSIZE: dict[int, int] = {}
for _code in _KNOWN_DTYPES - {TensorProto.STRING} - set(_BITS):
    try:
        _ITEMSIZE[_code] = _bits(_code) // 8
    except (KeyError, TypeError, ValueError):  # a type numpy cannot hold: check_tensor decides
        pass


def tensor_nbytes(tensor: TensorProto) -> int:
    """Bytes the tensor's raw data must hold: elements x bits, packed sub-byte types rounded up."""
    return math.ceil(math.prod(tensor.dims) * _bits(tensor.data_type) / 8)


def _what(tensor: TensorProto, where: str) -> str:
    """How errors name a tensor (built only for an error)."""
    return f"tensor {tensor.name!r} ({where}; declared {_dtype_name(tensor.data_type)} {list(tensor.dims)})"


def plain_raw_ok(tensor: TensorProto) -> bool:
    """Whether ``tensor`` certainly passes :func:`check_tensor`: inline ``raw_data`` of a whole-byte
    type, exactly as long as its shape needs, and no other data field (False: ask ``check_tensor``)."""
    raw = tensor.raw_data
    if not raw:
        return False
    size = _ITEMSIZE.get(tensor.data_type)
    if size is None or tensor.data_location == TensorProto.EXTERNAL or tensor.float_data or tensor.int32_data \
            or tensor.string_data or tensor.int64_data or tensor.double_data or tensor.uint64_data:
        return False
    dims = tensor.dims
    if dims:
        if min(dims) < 0:
            return False
        size *= math.prod(dims)
    return len(raw) == size


def check_tensor(tensor: TensorProto, where: str) -> None:
    """Refuse a tensor whose declared type and shape disagree with the data it carries."""
    code = tensor.data_type
    if code not in _KNOWN_DTYPES:
        raise ModelError(f"{_what(tensor, where)}: data type {code} is not an ONNX data type")
    if any(d < 0 for d in tensor.dims):
        raise ModelError(f"{_what(tensor, where)}: negative dimension")
    numel = math.prod(tensor.dims)
    fields = [f for f in _DATA_FIELDS if len(getattr(tensor, f))]
    has_raw = tensor.HasField("raw_data")
    if tensor.data_location == TensorProto.EXTERNAL:
        if has_raw or fields:
            raise ModelError(f"{_what(tensor, where)}: marked as external data but also holds data inline")
        if code == TensorProto.STRING:
            raise ModelError(f"{_what(tensor, where)}: strings cannot be stored as external data")
        info = {e.key: e.value for e in tensor.external_data}
        if "location" not in info:
            raise ModelError(f"{_what(tensor, where)}: external data without a location")
        if "length" in info:
            try:
                length = int(info["length"])
            except ValueError as exc:
                raise ModelError(f"{_what(tensor, where)}: external data length {info['length']!r} is not an integer") from exc
            if length != tensor_nbytes(tensor):
                raise ModelError(
                    f"{_what(tensor, where)}: external data length {length} differs from the {tensor_nbytes(tensor)} bytes "
                    "the type and shape need"
                )
        return
    if has_raw and fields:
        raise ModelError(f"{_what(tensor, where)}: holds both raw_data and {fields[0]}")
    if len(fields) > 1:
        raise ModelError(f"{_what(tensor, where)}: holds data in several fields ({', '.join(fields)})")
    if has_raw:
        if code == TensorProto.STRING:
            raise ModelError(f"{_what(tensor, where)}: strings cannot be stored as raw_data")
        need = tensor_nbytes(tensor)
        if len(tensor.raw_data) != need:
            raise ModelError(f"{_what(tensor, where)}: raw_data holds {len(tensor.raw_data)} bytes, the type and shape need {need}")
        return
    if not fields:
        if numel == 0:
            return
        raise ModelError(f"{_what(tensor, where)}: holds no data (refused rather than filled with zeros)")
    field = fields[0]
    expected_field = onnx.helper.tensor_dtype_to_field(code)
    if field != expected_field:
        raise ModelError(f"{_what(tensor, where)}: data in {field}, but a {_dtype_name(code)} tensor keeps it in {expected_field}")
    count = len(getattr(tensor, field))
    if code in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        need = 2 * numel
    elif code in _BITS:
        need = math.ceil(numel * _BITS[code] / 32) if _BITS[code] == 6 else math.ceil(numel * _BITS[code] / 8)
    else:
        need = numel
    if code in _BITS and _BITS[code] == 6:
        return  # 6-bit packing in int32_data is not fixed by the spec: raw_data is checked instead
    if code in _BITS and count in (numel, need):
        return
    if count != need:
        raise ModelError(f"{_what(tensor, where)}: {field} holds {count} values, the shape needs {need}")


# -- walking the proto -------------------------------------------------------------------------
def _graph_tensors(graph: onnx.GraphProto, where: str) -> Iterator[tuple[TensorProto, str]]:
    for t in graph.initializer:
        yield t, f"initializer of graph {graph.name!r}"
    for sp in graph.sparse_initializer:
        yield sp.values, f"values of sparse initializer in graph {graph.name!r}"
        yield sp.indices, f"indices of sparse initializer in graph {graph.name!r}"
    for node in graph.node:
        yield from _node_tensors(node)


def _node_tensors(node: onnx.NodeProto) -> Iterator[tuple[TensorProto, str]]:
    if not node.attribute:
        return
    label = f"attribute of node {node.name or '<unnamed>'!r} ({node.op_type})"
    for attr in node.attribute:
        if attr.HasField("t"):
            yield attr.t, f"{label} {attr.name!r}"
        for t in attr.tensors:
            yield t, f"{label} {attr.name!r}"
        if attr.HasField("sparse_tensor"):
            yield attr.sparse_tensor.values, f"{label} {attr.name!r}"
            yield attr.sparse_tensor.indices, f"{label} {attr.name!r}"
        if attr.HasField("g"):
            yield from _graph_tensors(attr.g, label)
        for g in attr.graphs:
            yield from _graph_tensors(g, label)


def all_tensors(model: onnx.ModelProto) -> Iterator[tuple[TensorProto, str]]:
    """Every tensor of a model with where it sits: initializers, attributes, subgraphs, functions."""
    yield from _graph_tensors(model.graph, "main graph")
    for fn in model.functions:
        for node in fn.node:
            yield from _node_tensors(node)


def check_tensors(model: onnx.ModelProto) -> None:
    """:func:`check_tensor` on every tensor of :func:`all_tensors`, in that order (where a tensor
    sits is named only for a tensor that is not plainly fine)."""
    graph = model.graph
    for t in graph.initializer:
        if not plain_raw_ok(t):
            check_tensor(t, f"initializer of graph {graph.name!r}")
    for sp in graph.sparse_initializer:
        check_tensor(sp.values, f"values of sparse initializer in graph {graph.name!r}")
        check_tensor(sp.indices, f"indices of sparse initializer in graph {graph.name!r}")
    for node in (*graph.node, *(n for fn in model.functions for n in fn.node)):
        if node.attribute:
            for t, where in _node_tensors(node):
                if not plain_raw_ok(t):
                    check_tensor(t, where)


def _subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for attr in node.attribute:
        if attr.HasField("g"):
            yield attr.g
        yield from attr.graphs


# -- checks ---------------------------------------------------------------------------------------
def _check_opsets(model: onnx.ModelProto) -> None:
    newest = onnx.defs.onnx_opset_version()
    seen: dict[str, int] = {}
    for imp in list(model.opset_import):
        domain = "" if imp.domain in DEFAULT_DOMAINS else imp.domain
        if not 1 <= imp.version <= _INT32_MAX:
            raise ModelError(f"opset import {imp.domain or 'ai.onnx'!r} version {imp.version} is out of range")
        if domain in seen and seen[domain] != imp.version:
            raise ModelError(f"the model imports domain {imp.domain or 'ai.onnx'!r} twice, as versions "
                             f"{seen[domain]} and {imp.version}")
        seen[domain] = imp.version
        if domain == "" and imp.version > newest:
            raise ModelError(
                f"the model imports opset {imp.version} of the default domain; the installed onnx "
                f"knows opsets up to {newest} (upgrade onnx, or convert the model to opset {newest})"
            )


def _check_text(node: onnx.NodeProto, where: str) -> None:
    """Names and op types are text: a field that is not valid UTF-8 comes back as bytes."""
    fields = [node.op_type, node.domain, node.name, *node.input, *node.output, *(a.name for a in node.attribute)]
    if any(not isinstance(f, str) for f in fields):
        bad = next(f for f in fields if not isinstance(f, str))
        raise ModelError(f"a node in {where} has a name, op type or domain that is not valid UTF-8: {bad[:80]!r}")


def _label(node: onnx.NodeProto) -> str:
    return f"node {node.name or '<unnamed>'!r} ({node.domain or 'ai.onnx'}::{node.op_type})"


@functools.lru_cache(maxsize=4096)
def _schema_facts(op_type: str, version: int, domain: str) -> tuple[int, int, int, int, int, dict[str, int]] | None:
    """since_version, input and output counts and attribute types of a schema (None: onnx has none);
    asked once per op and opset (reading a schema's attributes builds them anew each time)."""
    try:
        schema = onnx.defs.get_schema(op_type, version, domain)
    except onnx.defs.SchemaError:
        return None
    return (schema.since_version, schema.min_input, schema.max_input, schema.min_output, schema.max_output,
            {k: int(a.type) for k, a in schema.attributes.items()})


def _check_attributes(node: onnx.NodeProto, opsets: dict[str, int], in_function: bool, where: str) -> None:
    """Text fields, attribute duplicates and references, input/output counts and attribute types
    of one node (its default domain spelled ``""`` first)."""
    _check_text(node, where)
    if node.domain == "ai.onnx":
        node.domain = ""
    _check_schema(node, node.op_type, node.domain, node.input, node.output, node.attribute, opsets, in_function,
                  where)


def _check_schema(node: onnx.NodeProto, op_type: str, domain: str, ins, outs, attrs, opsets: dict[str, int],
                  in_function: bool, where: str) -> None:
    """:func:`_check_attributes` past the text check, on fields the caller has read already
    (``domain``: normalized)."""
    if attrs:
        names = [a.name for a in attrs]
        if len(set(names)) != len(names):
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise ModelError(f"{_label(node)} in {where} has attribute {dupes[0]!r} more than once")
        for attr in attrs:
            if attr.ref_attr_name and not in_function:
                raise ModelError(f"{_label(node)} in {where}: attribute {attr.name!r} refers to {attr.ref_attr_name!r}, "
                                 "but attribute references are only allowed inside a function")
    if domain != "" and domain != "ai.onnx.ml":
        return
    version = opsets.get(domain)
    if version is None:
        return
    facts = _schema_facts(op_type, version, domain)
    if facts is None:
        return
    since, min_in, max_in, min_out, max_out, types = facts
    n_in = len(ins)
    while n_in and not ins[n_in - 1]:
        n_in -= 1  # trailing empty names are omitted optional inputs
    if not min_in <= n_in <= max_in:
        raise ModelError(f"{_label(node)} in {where} has {n_in} inputs; {op_type}-{since} takes "
                         f"{min_in} to {max_in}")
    if not min_out <= len(outs) <= max_out:
        raise ModelError(f"{_label(node)} in {where} has {len(outs)} outputs; {op_type}-{since} "
                         f"gives {min_out} to {max_out}")
    for attr in attrs:
        if attr.ref_attr_name:
            continue
        want = types.get(attr.name)
        if want is None:  # refused before shape inference reads it (onnx may spend minutes on one)
            raise ModelError(f"{_label(node)} in {where} has attribute {attr.name!r}, which {op_type}-{since} "
                             "does not define")
        got = attr.type if attr.type != AttributeProto.UNDEFINED else _set_type(attr)
        if got != want:
            raise ModelError(
                f"{_label(node)} in {where}: attribute {attr.name!r} is {AttributeProto.AttributeType.Name(got)}, "
                f"{op_type}-{since} defines it as {AttributeProto.AttributeType.Name(want)}"
            )


def _counts(op_type: str, domain: str, opsets: dict[str, int]) -> tuple[int, ...]:
    """The least and most inputs and outputs :func:`_check_schema` allows (``()``: it checks none)."""
    if domain != "" and domain != "ai.onnx.ml" or domain not in opsets:
        return ()
    facts = _schema_facts(op_type, opsets[domain], domain)
    return () if facts is None else facts[1:5]


def _set_type(attr: AttributeProto) -> int:
    for field, kind in (("f", AttributeProto.FLOAT), ("i", AttributeProto.INT), ("s", AttributeProto.STRING),
                        ("t", AttributeProto.TENSOR), ("g", AttributeProto.GRAPH)):
        if attr.HasField(field):
            return kind
    return AttributeProto.UNDEFINED


def _check_body(node: onnx.NodeProto, label: str) -> None:
    """If/Loop/Scan bodies have the inputs and outputs their op needs."""
    bodies = {a.name: a.g for a in node.attribute if a.HasField("g")}
    if node.domain not in DEFAULT_DOMAINS:
        return
    if node.op_type == "If":
        for key in ("then_branch", "else_branch"):
            g = bodies.get(key)
            if g is None:
                continue
            if len(g.input):
                raise ModelError(f"{label}: {key} declares {len(g.input)} inputs; If branches take none")
            if len(g.output) != len(node.output):
                raise ModelError(f"{label}: {key} has {len(g.output)} outputs, the If node {len(node.output)}")
    elif node.op_type == "Loop" and "body" in bodies:
        g = bodies["body"]
        carried = max(len(node.input) - 2, 0)
        if len(g.input) != 2 + carried:
            raise ModelError(f"{label}: the body takes {len(g.input)} inputs; with {carried} loop-carried values "
                             f"it must take {2 + carried} (iteration, condition, carried values)")
        if len(g.output) < 1 + carried or len(node.output) < carried or \
                len(g.output) - 1 - carried != len(node.output) - carried:
            raise ModelError(f"{label}: the body's {len(g.output)} outputs do not match the node's "
                             f"{len(node.output)} outputs and {carried} loop-carried values")


def _check_graph(graph: onnx.GraphProto, opsets: dict[str, int], where: str, in_function: bool,
                 outer: set[str]) -> None:
    """Value names, single producers, and every node (:func:`_check_attributes`, bodies, subgraphs);
    spells each node's default domain ``""``."""
    inputs = [v.name for v in graph.input]
    inits = [t.name for t in graph.initializer] + [sp.values.name for sp in graph.sparse_initializer]
    outputs = [v.name for v in graph.output]
    names = (*inputs, *inits, *outputs, *(v.name for v in graph.value_info))
    try:
        "".join(names)  # raises on a name that is not text
    except TypeError:
        for n in names:
            if not isinstance(n, str):
                raise ModelError(f"{where}: a value name is not valid UTF-8: {n[:80]!r}") from None
    for kind, names in (("graph input", inputs), ("initializer", inits)):
        if len(set(names)) == len(names):
            continue
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise ModelError(f"{where}: two {kind}s are named {n!r}")
            seen.add(n)
    if "" in inputs or "" in outputs:
        raise ModelError(f"{where}: a graph input or output has an empty name")
    if "" in inits:
        raise ModelError(f"{where}: an initializer has an empty name")
    produced: set[str] = set(inputs) | set(inits)
    add = produced.add
    schema_counts: dict[tuple[str, str], tuple[int, ...]] = {}
    for node in graph.node:
        outs = node.output
        for out in outs:
            if not out:
                continue
            if out in produced:
                raise ModelError(f"{where}: value {out!r} is produced twice ({_label(node)} and an earlier node or input)")
            add(out)
        ins, op_type, domain, attrs = node.input, node.op_type, node.domain, node.attribute
        try:
            "".join((op_type, domain, node.name, *ins, *outs))  # raises on a field that is not text
            if attrs:
                "".join([a.name for a in attrs])
        except TypeError:
            _check_text(node, where)
        if domain == "ai.onnx":
            node.domain = domain = ""
        if attrs:
            _check_schema(node, op_type, domain, ins, outs, attrs, opsets, in_function, where)
        else:  # no attributes: the counts of its schema, read once per op
            counts = schema_counts.get((op_type, domain))
            if counts is None:
                counts = schema_counts[(op_type, domain)] = _counts(op_type, domain, opsets)
            n_in = len(ins)
            if counts and not (counts[0] <= n_in <= counts[1] and counts[2] <= len(outs) <= counts[3]
                               and (not n_in or ins[n_in - 1])):
                _check_schema(node, op_type, domain, ins, outs, attrs, opsets, in_function, where)
        if attrs:  # bodies and subgraphs are attributes
            label = _label(node)
            _check_body(node, label)
            for g in _subgraphs(node):
                _check_graph(g, opsets, f"subgraph {g.name!r} of {label}", in_function, outer | produced)


def _check_functions(model: onnx.ModelProto, opsets: dict[str, int]) -> None:
    for f in model.functions:  # the default domain spelled "" before calls are resolved
        for imp in f.opset_import:
            if imp.domain == "ai.onnx":
                imp.domain = ""
        for n in f.node:
            if n.domain == "ai.onnx":
                n.domain = ""
    funcs = {(f.domain, f.name, f.overload): f for f in model.functions}
    if len(funcs) != len(model.functions):
        raise ModelError("the model defines a local function twice (same domain, name and overload)")
    calls = {
        key: {(n.domain, n.op_type, n.overload) for n in f.node if (n.domain, n.op_type, n.overload) in funcs}
        for key, f in funcs.items()
    }
    state: dict[tuple, int] = {}

    def visit(key, path):
        state[key] = 1
        for callee in calls[key]:
            if state.get(callee) == 1:
                cycle = " -> ".join(f"{d}::{n}" for d, n, _ in [*path, callee])
                raise ModelError(f"local functions call themselves recursively: {cycle}")
            if state.get(callee) is None:
                visit(callee, [*path, callee])
        state[key] = 2

    for key in funcs:
        if key not in state:
            visit(key, [key])
    for f in funcs.values():
        f_opsets = {("" if o.domain in DEFAULT_DOMAINS else o.domain): o.version for o in f.opset_import}
        for d, v in f_opsets.items():
            if not 1 <= v <= _INT32_MAX:
                raise ModelError(f"function {f.domain}::{f.name} imports opset {v} of {d or 'ai.onnx'!r}")
            if d in opsets and opsets[d] != v:
                raise ModelError(
                    f"function {f.domain}::{f.name} imports opset {v} of {d or 'ai.onnx'!r}, the model "
                    f"{opsets[d]}; a function must use the model's opset"
                )
        where = f"function {f.domain}::{f.name}"
        for node in f.node:
            _check_attributes(node, {**opsets, **f_opsets}, True, where)
            for g in _subgraphs(node):
                _check_graph(g, {**opsets, **f_opsets}, where, True, set())


def _negative_input_dims(graph: onnx.GraphProto) -> Iterator[tuple[onnx.ValueInfoProto, int, onnx.TensorShapeProto.Dimension]]:
    for v in graph.input:
        t = v.type
        if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            continue
        for i, d in enumerate(t.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value < 0:
                yield v, i, d


def unknown_negative_dims(graph: onnx.GraphProto) -> None:
    """A graph input dimension declared negative (``-1`` for "any", as some exporters write it) is
    read as unknown, as onnxruntime reads it, with a warning naming the input and dimension."""
    import warnings

    for v, i, d in list(_negative_input_dims(graph)):
        warnings.warn(f"graph input {v.name!r} declares dimension {i} as {d.dim_value}; a dimension is a "
                      "size >= 0, a name or unset: it is read as unknown, as onnxruntime does", stacklevel=4)
        d.ClearField("dim_value")


#: a sparse initializer is made dense at load; past this many bytes it is refused instead
SPARSE_DENSE_BYTES = 1 << 30


def densify_sparse(graph: onnx.GraphProto) -> None:
    """Replace the graph's sparse initializers by dense ones (as onnxruntime does), indices checked."""
    import numpy as np
    from onnx import numpy_helper

    for sp in list(graph.sparse_initializer):
        name = sp.values.name
        what = f"sparse initializer {name!r} (dims {list(sp.dims)})"
        if any(d < 0 for d in sp.dims):
            raise ModelError(f"{what}: negative dimension")
        numel = math.prod(sp.dims)
        if numel * _bits(sp.values.data_type) / 8 > SPARSE_DENSE_BYTES:
            raise ModelError(f"{what}: {numel} elements dense are more than onnxport makes of a sparse tensor")
        try:
            values = numpy_helper.to_array(sp.values).reshape(-1)
            indices = numpy_helper.to_array(sp.indices).astype(np.int64)
        except Exception as exc:  # noqa: BLE001 - checked tensors that numpy still cannot read
            raise ModelError(f"{what}: unreadable values or indices: {exc}") from exc
        if indices.ndim == 2 and indices.shape[1] == len(sp.dims) and len(sp.dims):
            if np.any(indices < 0) or np.any(indices >= np.array(sp.dims)):
                raise ModelError(f"{what}: an index lies outside the shape")
            indices = np.ravel_multi_index(indices.T, tuple(sp.dims)) if indices.size else indices.reshape(-1)
        elif indices.ndim != 1:
            raise ModelError(f"{what}: indices of shape {list(indices.shape)}; expected [nnz] or [nnz, rank]")
        if indices.shape[0] != values.shape[0]:
            raise ModelError(f"{what}: {indices.shape[0]} indices for {values.shape[0]} values")
        if indices.size and (indices.min() < 0 or indices.max() >= numel):
            raise ModelError(f"{what}: an index lies outside the shape")
        dense = np.zeros(numel, dtype=values.dtype)
        dense[indices] = values
        tensor = numpy_helper.from_array(dense.reshape(tuple(sp.dims)), name)
        tensor.data_type = sp.values.data_type
        graph.initializer.append(tensor)
        graph.sparse_initializer.remove(sp)


def needs_rewrite(model: onnx.ModelProto) -> bool:
    """Whether :func:`check_model` will change the proto (sparse initializers, ``"ai.onnx"`` domains,
    negative input dimensions)."""
    if model.graph.sparse_initializer or any(i.domain == "ai.onnx" for i in model.opset_import) or \
            next(_negative_input_dims(model.graph), None) is not None or \
            any(i.domain == "ai.onnx" for f in model.functions for i in f.opset_import):
        return True
    pending = [model.graph.node, *(f.node for f in model.functions)]  # node lists, subgraphs' too
    while pending:
        for n in pending.pop():
            if n.domain == "ai.onnx":
                return True
            if n.attribute:
                pending.extend(g.node for g in _subgraphs(n))
    return False


def check_model(model: onnx.ModelProto) -> None:
    """Refuse malformed tensors, duplicate names, ill-typed attributes, bad opsets and recursion;
    spell the default domain ``""`` everywhere (``"ai.onnx"`` is a legal alias onnxruntime accepts);
    read a negative graph input dimension as unknown."""
    _check_opsets(model)
    for imp in model.opset_import:
        if imp.domain == "ai.onnx":
            imp.domain = ""
    check_tensors(model)
    unknown_negative_dims(model.graph)
    densify_sparse(model.graph)
    opsets = {imp.domain: imp.version for imp in model.opset_import}
    _check_graph(model.graph, opsets, f"graph {model.graph.name!r}", False, set())
    _check_functions(model, opsets)


#: subgraphs nested deeper than this are refused before any recursive pass walks them
MAX_NESTING = 64


def check_ir_nesting(model) -> None:
    """Refuse an ``onnx_ir.Model`` whose subgraphs nest deeper than :data:`MAX_NESTING` (checked without recursion)."""
    import onnx_ir as ir

    stack = [(model.graph, 0), *((f.graph, 0) for f in model.functions.values())]
    while stack:
        graph, depth = stack.pop()
        if depth > MAX_NESTING:
            raise ModelError(f"subgraphs nest more than {MAX_NESTING} levels deep (graph {graph.name!r}); "
                             "onnxport refuses such models")
        for node in graph:
            for attr in node.attributes.values():
                if attr.type == ir.AttributeType.GRAPH:
                    stack.append((attr.value, depth + 1))
                elif attr.type == ir.AttributeType.GRAPHS:
                    stack.extend((g, depth + 1) for g in attr.value)
