"""A checked ``ModelProto`` into an ``onnx_ir.Model``: onnx-ir's deserializer, with a shorter path
for the common model (one graph: no subgraphs, local functions, annotations or device settings).

The short path builds the model with onnx-ir's public constructors, with the fields and in the
order onnx-ir's own deserializer uses (``tests/core/test_deserialize.py`` compares the two);
initializer values of one shape share one frozen shape, as a tensor's values may. Anything it
does not cover, and any error, goes to :func:`onnx_ir.serde.deserialize_model`, whose result and
errors are the reference.
"""

from __future__ import annotations

import onnx
import onnx_ir as ir
from onnx_ir import serde

_GRAPH_KINDS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def deserialize_model(proto: onnx.ModelProto) -> ir.Model:
    """The IR model of ``proto``, as :func:`onnx_ir.serde.deserialize_model` makes it."""
    try:
        model = simple_model(proto)
    except Exception:  # noqa: BLE001 - onnx-ir's deserializer reports it in its own words
        model = None
    return model if model is not None else serde.deserialize_model(proto)


def _field(proto, name: str):
    return getattr(proto, name) if proto.HasField(name) else None


def simple_model(proto: onnx.ModelProto) -> ir.Model | None:
    """The model built on the short path, or None where that path does not apply."""
    if proto.functions or getattr(proto, "configuration", None):
        return None
    graph = _simple_graph(proto.graph)
    if graph is None:
        return None
    graph.opset_imports.update(serde.deserialize_opset_import(proto.opset_import))
    return ir.Model(
        graph,
        ir_version=proto.ir_version,
        producer_name=_field(proto, "producer_name"),
        producer_version=_field(proto, "producer_version"),
        domain=_field(proto, "domain"),
        model_version=_field(proto, "model_version"),
        doc_string=_field(proto, "doc_string"),
        functions=[],
        metadata_props=serde.deserialize_metadata_props(proto.metadata_props),
    )


def _simple_graph(proto: onnx.GraphProto) -> ir.Graph | None:
    """The main graph, or None for a subgraph, an annotation, a device setting, an unnamed
    initializer, a value defined twice, read before it is defined or never, or a graph output
    no one computes."""
    if proto.quantization_annotation:
        return None
    value_class, to_value = ir.Value, serde.deserialize_value_info_proto
    inputs = []
    values: dict[str, ir.Value] = {}
    for info in proto.input:
        value = value_class(name=info.name)
        to_value(info, value)
        inputs.append(value)
        values[value.name] = value
    value_info = {info.name: info for info in proto.value_info}
    initializers = []
    shapes: dict[tuple[int, ...], ir.Shape] = {}
    tensor_type, to_tensor = ir.TensorType, serde.deserialize_tensor
    for tensor_proto in proto.initializer:
        tensor = to_tensor(tensor_proto)
        name = tensor.name
        if not name:
            return None
        value = values.get(name)
        if value is not None:  # an input's default value
            value.const_value = tensor
        else:
            dims = tuple(tensor_proto.dims)
            shape = shapes.get(dims)
            if shape is None:
                shape = shapes[dims] = tensor.shape  # frozen
            value = value_class(None, index=None, name=name, type=tensor_type(tensor.dtype), shape=shape,
                                const_value=tensor)
            info = value_info.get(name) if value_info else None
            if info is not None:
                to_value(info, value)
            values[name] = value
        initializers.append(value)
    # one pass: a node reading a value that a later node computes (an unsorted graph, a cycle)
    # leaves the short path (onnx-ir declares every output first)
    nodes = []
    node_class, to_attr, to_props = ir.Node, serde.deserialize_attribute, serde.deserialize_metadata_props
    devices = hasattr(onnx.NodeProto, "device_configurations")
    for node in proto.node:
        node_inputs: list[ir.Value | None] = []
        for name in node.input:
            if not name:
                node_inputs.append(None)
                continue
            value = values.get(name)
            if value is None:
                return None
            node_inputs.append(value)
        outputs = []
        for name in node.output:
            if not name:
                outputs.append(value_class(name=""))
                continue
            if name in values:
                return None
            value = values[name] = value_class(name=name)
            info = value_info.get(name) if value_info else None
            if info is not None:
                to_value(info, value)
            outputs.append(value)
        attrs = node.attribute
        if attrs:
            if any(a.type in _GRAPH_KINDS or a.HasField("g") or a.graphs for a in attrs):
                return None
            attrs = [to_attr(a) for a in attrs]
        else:
            attrs = []
        if devices and node.device_configurations:
            return None
        nodes.append(node_class(
            node.domain, node.op_type, node_inputs, attrs, overload=getattr(node, "overload", ""),
            outputs=outputs, name=node.name, doc_string=_field(node, "doc_string"),
            metadata_props=to_props(node.metadata_props),
        ))
    outputs = []
    for info in proto.output:
        value = values.get(info.name)
        if value is None:
            return None
        to_value(info, value)
        outputs.append(value)
    return ir.Graph(inputs, outputs, nodes=nodes, initializers=initializers, doc_string=_field(proto, "doc_string"),
                    name=_field(proto, "name"), metadata_props=to_props(proto.metadata_props))
