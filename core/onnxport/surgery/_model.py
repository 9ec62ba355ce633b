"""What every surgery module shares: the error, copying a model, reading and writing constants."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnx_ir as ir

from .. import driver as _driver
from .. import io as _io
from ..errors import ModelError

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
    if len(users) <= 1 and not value.is_graph_output() and value.const_value is not None:
        return value
    base = f"{node.name or node.op_type}_in{index}"
    name, k = base, 0
    while name in graph.initializers:
        k += 1
        name = f"{base}_{k}"
    fresh = ir.Value(name=name, shape=ir.Shape(array.shape), type=ir.TensorType(ir.DataType.from_numpy(array.dtype)),
                     const_value=ir.tensor(array, name=name))
    graph.register_initializer(fresh)
    node.replace_input_with(index, fresh)
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
    from ..edit import _remove_unused_initializers

    graph = model.graph
    keep = set(graph.inputs) | set(graph.outputs)
    for node in graph:
        for v in node.outputs:
            if v not in keep:
                v.shape = None
    _remove_unused_initializers(graph)
    _driver.infer_shapes(model)
    _driver.validate(model)
    proto = ir.serde.serialize_model(model)
    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as exc:  # noqa: BLE001 - a model we cannot vouch for is never handed out
        raise SizeAlignmentError(f"the edited model fails onnx.checker: {str(exc).splitlines()[0]}") from exc
    return model


def const_source(value: ir.Value | None) -> tuple[ir.Value, list[int]] | None:
    """The constant ``value`` is a view of (through Identity/Transpose), and for each of
    ``value``'s axes the constant's axis; ``None`` when ``value`` is computed otherwise."""
    if value is None:
        return None
    arr = const_array(value)
    if arr is not None:
        return value, list(range(arr.ndim))
    node = value.producer()
    if node is None or node.domain not in ("", "ai.onnx") or node.op_type not in ("Identity", "Transpose"):
        return None
    src = const_source(node.inputs[0])
    if src is None:
        return None
    v, amap = src
    if node.op_type == "Identity":
        return v, amap
    perm = node.attributes.get("perm")
    perm = list(perm.value) if perm is not None else list(range(len(amap)))[::-1]
    return v, [amap[p] for p in perm]


def weight_array(value: ir.Value | None) -> np.ndarray | None:
    """The array of a constant, or of an Identity/Transpose view of one."""
    src = const_source(value)
    if src is None:
        return None
    v, amap = src
    return np.transpose(const_array(v), amap)
