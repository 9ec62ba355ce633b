"""Inserting identity-initialised layers and removing layers with their neighbours realigned."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnx_ir as ir

from ..graph import _node, _value, _values, remove_node
from ._model import SizeAlignmentError, const_source, copy_model, finish, label
from .analysis import analyze
from .prune import channel_scores, prune_channels
from .widen import widen_channels

LAYERS = ("conv", "linear", "batchnorm")


def _unique(taken: set[str], base: str) -> str:
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _names(graph: ir.Graph) -> set[str]:
    names = {v.name for v in graph.inputs if v.name} | set(graph.initializers)
    for node in graph:
        if node.name:
            names.add(node.name)
        names.update(v.name for v in node.outputs if v.name)
    return names


def _init(graph: ir.Graph, taken: set[str], name: str, array: np.ndarray) -> ir.Value:
    name = _unique(taken, name)
    v = ir.Value(name=name, shape=ir.Shape(array.shape), type=ir.TensorType(ir.DataType.from_numpy(array.dtype)),
                 const_value=ir.tensor(array, name=name))
    graph.register_initializer(v)
    return v


def insert_layer(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    after: str,
    layer: str = "conv",
    *,
    kernel_size: int = 1,
    name: str | None = None,
) -> ir.Model:
    """A copy of ``model`` with a new layer reading value ``after``; its readers read the layer.

    ``layer`` is ``"conv"`` (a ``kernel_size`` convolution over axis 1, same padding), ``"linear"``
    (MatMul + Add over the last axis) or ``"batchnorm"`` (over axis 1), initialised to the identity:
    outputs are unchanged until the new weights are trained. When ``after`` is a graph output the
    output keeps its name and the value before the new layer is renamed ``<after>_pre``.
    """
    if layer not in LAYERS:
        raise SizeAlignmentError(f"layer must be one of {LAYERS}, got {layer!r}")
    m = copy_model(model)
    g = m.graph

    src = _value(_values(g), after, "value")
    dims = list(src.shape) if src.shape is not None else None
    axis = -1 if layer == "linear" else 1
    if dims is None or len(dims) < (2 if layer != "conv" else 3) or not isinstance(dims[axis], int):
        raise SizeAlignmentError(
            f"value {after!r} has shape {dims}: a {layer} layer needs a known channel size on axis {axis}")
    if src.dtype is None or not src.dtype.is_floating_point():
        raise SizeAlignmentError(f"value {after!r} is {src.dtype}; layers take floating-point values")
    c = int(dims[axis])
    readers = list(src.uses())  # before the new layer reads it too
    dtype = src.dtype.numpy()
    taken = _names(g)
    base = _unique(taken, name or f"{after}_{layer}")
    if layer == "conv":
        if kernel_size % 2 != 1:
            raise SizeAlignmentError(f"kernel_size {kernel_size} must be odd to keep the spatial shape")
        spatial = len(dims) - 2
        w = np.zeros((c, c) + (kernel_size,) * spatial, dtype)
        w[(np.arange(c), np.arange(c)) + (kernel_size // 2,) * spatial] = 1
        inputs = [src, _init(g, taken, f"{base}.weight", w), _init(g, taken, f"{base}.bias", np.zeros(c, dtype))]
        nodes = [ir.Node("", "Conv", inputs, name=base, attributes=[
            ir.AttrInt64s("kernel_shape", [kernel_size] * spatial),
            ir.AttrInt64s("pads", [kernel_size // 2] * (2 * spatial))])]
    elif layer == "linear":
        mm = ir.Node("", "MatMul", [src, _init(g, taken, f"{base}.weight", np.eye(c, dtype=dtype))], name=base)
        mm.outputs[0].name = _unique(taken, f"{base}_matmul")
        add = ir.Node("", "Add", [mm.outputs[0], _init(g, taken, f"{base}.bias", np.zeros(c, dtype))],
                      name=_unique(taken, f"{base}_bias"))
        nodes = [mm, add]
    else:
        eps = 1e-5
        stats = [np.ones(c, dtype), np.zeros(c, dtype), np.zeros(c, dtype), np.full(c, 1 - eps, dtype)]
        inputs = [src] + [_init(g, taken, f"{base}.{k}", a) for k, a in zip(("weight", "bias", "mean", "var"), stats)]
        nodes = [ir.Node("", "BatchNormalization", inputs, name=base, attributes=[ir.AttrFloat32("epsilon", eps)])]
    out = nodes[-1].outputs[0]
    out.name = _unique(taken, f"{base}_out")
    out.type, out.shape = src.type, src.shape
    producer = src.producer()
    if producer is not None:
        g.insert_after(producer, nodes)
    else:
        g.insert_before(next(iter(g)), nodes) if len(g) else g.extend(nodes)
    for user, i in readers:
        user.replace_input_with(i, out)
    if src.is_graph_output():
        keep = src.name
        for k, o in enumerate(g.outputs):
            if o is src:
                g.outputs[k] = out
        src.name = _unique(taken, f"{keep}_pre")
        out.name = keep
    g.sort()
    return finish(m)


def _data_input(node: ir.Node) -> int:
    runtime = [i for i, v in enumerate(node.inputs) if v is not None and const_source(v) is None]
    if len(runtime) != 1:
        raise SizeAlignmentError(f"node {label(node)} reads {len(runtime)} run-time values; remove_layer takes one")
    return runtime[0]


def remove_layer(
    model: str | os.PathLike | bytes | onnx.ModelProto | ir.Model,
    node: str,
    align: str = "shrink",
) -> ir.Model:
    """A copy of ``model`` without layer ``node``; its readers read the layer's input.

    When the layer changes the channel count (``n_in != n_out``), ``align`` says how the graph is
    realigned: ``"shrink"`` prunes the wider side (its lowest-L1 channels) to the narrower one,
    ``"pad"`` widens the narrower side with zero-initialised channels, ``"none"`` raises
    :class:`SizeAlignmentError`. A layer that changes spatial sizes (strides) cannot be removed.
    """
    if align not in ("shrink", "pad", "none"):
        raise SizeAlignmentError(f"align must be 'shrink', 'pad' or 'none', got {align!r}")
    m = copy_model(model)
    groups = analyze(m)

    target = _node(m.graph, node)
    data = _data_input(target)
    src, out = target.inputs[data], target.outputs[0]
    if src.shape is None or out.shape is None or len(src.shape) != len(out.shape):
        raise SizeAlignmentError(f"node {label(target)}: input and output ranks differ or are unknown")
    axis = 1 if target.op_type in ("Conv", "ConvTranspose", "Gemm", "BatchNormalization",
                                   "InstanceNormalization") else len(out.shape) - 1
    for k, (a, b) in enumerate(zip(src.shape, out.shape)):
        if k != axis and a != b:
            raise SizeAlignmentError(
                f"node {label(target)} changes axis {k} from {a} to {b}; removing it would misalign the graph")
    n_in, n_out = src.shape[axis], out.shape[axis]
    if not isinstance(n_in, int) or not isinstance(n_out, int):
        raise SizeAlignmentError(f"node {label(target)}: channel sizes {n_in} -> {n_out} are not known")
    current: ir.Model = m
    if n_in != n_out:
        if align == "none":
            raise SizeAlignmentError(
                f"node {label(target)} maps {n_in} to {n_out} channels; pass align='shrink' or 'pad'")
        wide_is_out = n_out > n_in
        if align == "shrink":
            value = out if wide_is_out else src
            layout = groups.layout(value).get(axis % len(out.shape))
            if not layout or len(layout) != 1:
                raise SizeAlignmentError(f"node {label(target)}: the {n_out if wide_is_out else n_in} channels of "
                                         f"{value.name!r} are not one group; prune them first")
            grp = groups[layout[0].group]
            if grp.fixed:
                raise SizeAlignmentError(f"cannot shrink {value.name!r} for removing {label(target)}: {grp.fixed}")
            scores = channel_scores(groups)[grp.id]
            keep = np.sort(np.argsort(-scores, kind="stable")[: min(n_in, n_out)])
            current = prune_channels(m, keep={grp.id: keep})
        else:
            value = src if wide_is_out else out
            current = widen_channels(m, value.name, max(n_in, n_out), init="zeros")

    return finish(copy_model(remove_node(current, node, passthrough_input=data)))
