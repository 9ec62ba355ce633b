"""What every surgery module shares: the error, copying a model, reading and writing constants."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnx_ir as ir

from ...errors import ModelError
from ...importing import plan as _driver
from ...ir import io as _io
from ..graph import _remove_unused_initializers

ModelLike = "str | os.PathLike | bytes | onnx.ModelProto | ir.Model"


class SizeAlignmentError(ModelError):
    """A channel edit cannot keep the graph's sizes aligned; the message names the node or group."""


def copy_model(model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model) -> ir.Model:
    """A private copy of ``model`` (any form :func:`onnxport.load` accepts) with shapes inferred."""
    if isinstance(model, ir.Model):
        m = _io.load(ir.serde.serialize_model(model))
    else:
        m = _io.load(model)
    _driver.infer_shapes(m)
    return m


def label(node: ir.Node) -> str:
    return _driver.node_label(node)


def const_array(value: ir.Value | None) -> np.ndarray | None:
    """The array of an initializer or of a ``Constant`` node's output; ``None`` when computed."""
    if value is None:
        return None
    if value.const_value is not None:
        return value.const_value.numpy()
    node = value.producer()
    if node is not None and node.op_type == "ConstantOfShape" and node.domain in ("", "ai.onnx"):
        shape = const_array(node.inputs[0]) if node.inputs else None
        if shape is None:
            return None
        attr = node.attributes.get("value")
        fill = attr.value.numpy().reshape(-1) if attr is not None else np.zeros(1, np.float32)
        return np.full([int(d) for d in shape.reshape(-1)], fill[0], dtype=fill.dtype)
    if node is not None and node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
        attr = node.attributes.get("value")
        if attr is not None and attr.type == ir.AttributeType.TENSOR:
            return attr.value.numpy()
        for key in ("value_ints", "value_floats"):
            if key in node.attributes:
                return np.asarray(node.attributes[key].value)
        for key in ("value_int", "value_float"):
            if key in node.attributes:
                return np.asarray(node.attributes[key].value)
    return None


def set_const(value: ir.Value, array: np.ndarray) -> None:
    """Write ``array`` into an initializer or a ``Constant`` node's output."""
    array = np.ascontiguousarray(array)
    node = value.producer()
    if node is not None and node.op_type == "ConstantOfShape":
        fill = const_array(value).reshape(-1)[:1]
        if array.size and fill.size and np.all(array == fill[0]):  # still one value: a new shape
            graph = node.graph
            shape = private_const(graph, node, 0)
            set_const(shape, np.asarray(array.shape, dtype=np.int64))
            value.shape = ir.Shape(array.shape)
            return
        graph, name = node.graph, value.name  # no longer one value: an initializer instead
        fresh = ir.Value(name=None, shape=ir.Shape(array.shape), type=value.type, const_value=None)
        value.replace_all_uses_with(fresh, replace_graph_outputs=True)
        graph.remove(node, safe=True)
        value.name = None
        fresh.name = name
        fresh.const_value = ir.tensor(array, name=name)
        graph.register_initializer(fresh)
        return
    if value.const_value is not None or node is None:
        value.const_value = ir.tensor(array, name=value.name)
        value.shape = ir.Shape(array.shape)
        return
    node.attributes.pop("value_ints", None)
    node.attributes.pop("value_floats", None)
    node.attributes.pop("value_int", None)
    node.attributes.pop("value_float", None)
    node.attributes["value"] = ir.AttrTensor("value", ir.tensor(array))
    value.shape = ir.Shape(array.shape)


def private_const(graph: ir.Graph, node: ir.Node, index: int) -> ir.Value:
    """Input ``index`` of ``node`` as a constant no other reader shares (copied when shared)."""
    value = node.inputs[index]
    array = const_array(value)
    if array is None:
        raise SizeAlignmentError(f"node {label(node)}: input {index} is not a constant")
    users = {id(u) for u, _ in value.uses()}
    producer = value.producer()
    own = value.const_value is not None or (producer is not None and producer.op_type == "Constant")
    if len(users) <= 1 and not value.is_graph_output() and own:
        return value  # an initializer or a Constant node of its own: edited in place
    base = f"{node.name or node.op_type}_in{index}"
    name, k = base, 0
    while name in graph.initializers:
        k += 1
        name = f"{base}_{k}"
    fresh = ir.Value(name=name, shape=ir.Shape(array.shape), type=ir.TensorType(ir.DataType.from_numpy(array.dtype)),
                     const_value=ir.tensor(array, name=name))
    graph.register_initializer(fresh)
    node.replace_input_with(index, fresh)
    if producer is not None and producer.op_type == "Constant" and not value.uses() and not value.is_graph_output():
        producer.graph.remove(producer, safe=True)  # the Constant node has no reader left
    return fresh


def static_dims(value: ir.Value | None) -> list[int | None] | None:
    """The value's dims (``None`` for symbolic ones), or ``None`` when its rank is unknown."""
    if value is None:
        return None
    arr = value.const_value
    if arr is not None:
        return list(arr.shape)
    if value.shape is None:
        return None
    return [d if isinstance(d, int) else None for d in value.shape]


def finish(model: ir.Model) -> ir.Model:
    """Re-infer every intermediate shape, drop unused initializers, validate and check the result."""
    graph = model.graph
    keep = set(graph.inputs) | set(graph.outputs)
    for node in graph:
        for v in node.outputs:
            if v not in keep:
                v.shape = None
    _remove_unused_initializers(graph)
    if model.ir_version is not None and model.ir_version < 4:  # initializers must be graph inputs
        listed = set(graph.inputs)
        graph.inputs.extend(v for v in graph.initializers.values() if v not in listed)
    _driver.infer_shapes(model)
    _driver.validate(model)
    proto = ir.serde.serialize_model(model)
    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as exc:  # noqa: BLE001 - a model we cannot vouch for is never handed out
        raise SizeAlignmentError(f"the edited model fails onnx.checker: {str(exc).splitlines()[0]}") from exc
    return model


def _view_axes(node: ir.Node, rank: int) -> list[int] | None:
    """The axes an Unsqueeze/Squeeze node inserts or removes (normalised), when constant."""
    attr = node.attributes.get("axes")
    if attr is not None:
        axes = [int(a) for a in attr.value]
    elif len(node.inputs) > 1 and node.inputs[1] is not None:
        arr = const_array(node.inputs[1])
        if arr is None:
            return None
        axes = [int(a) for a in arr.reshape(-1)]
    else:
        return None
    return sorted(a % rank for a in axes)


def const_source(value: ir.Value | None) -> tuple[ir.Value, list[int | None]] | None:
    """The constant ``value`` is a view of (through Identity, Transpose, Unsqueeze, Squeeze), and
    for each of ``value``'s axes the constant's axis (``None`` for an inserted axis of size 1);
    ``None`` when ``value`` is computed otherwise."""
    if value is None:
        return None
    arr = const_array(value)
    if arr is not None:
        return value, list(range(arr.ndim))
    node = value.producer()
    if node is None or node.domain not in ("", "ai.onnx") or node.op_type not in _VIEWS:
        return None
    src = const_source(node.inputs[0])
    if src is None:
        return None
    v, amap = src
    if node.op_type == "Identity":
        return v, amap
    if node.op_type == "Transpose":
        perm = node.attributes.get("perm")
        perm = list(perm.value) if perm is not None else list(range(len(amap)))[::-1]
        return v, [amap[p] for p in perm]
    if node.op_type == "Unsqueeze":
        axes = _view_axes(node, len(amap) + _count_axes(node))
        if axes is None:
            return None
        rest = iter(amap)
        return v, [None if k in axes else next(rest) for k in range(len(amap) + len(axes))]
    axes = _view_axes(node, len(amap))  # Squeeze
    if axes is None:
        return None
    return v, [a for k, a in enumerate(amap) if k not in axes]


_VIEWS = ("Identity", "Transpose", "Unsqueeze", "Squeeze")


def _count_axes(node: ir.Node) -> int:
    attr = node.attributes.get("axes")
    if attr is not None:
        return len(attr.value)
    arr = const_array(node.inputs[1]) if len(node.inputs) > 1 else None
    return 0 if arr is None else int(arr.size)


def weight_array(value: ir.Value | None) -> np.ndarray | None:
    """The array of a constant, or of an Identity/Transpose/Unsqueeze/Squeeze view of one."""
    src = const_source(value)
    if src is None:
        return None
    v, amap = src
    arr = const_array(v)
    kept = [a for a in amap if a is not None]
    gone = tuple(a for a in range(arr.ndim) if a not in kept)  # squeezed axes of size 1
    if gone:
        arr = np.squeeze(arr, axis=gone)
        kept = [sorted(kept).index(a) for a in kept]
    out = np.transpose(arr, kept)
    for k, a in enumerate(amap):
        if a is None:
            out = np.expand_dims(out, k)
    return out
