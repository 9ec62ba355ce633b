"""Graph clean-up for exported models: constant folding, static shapes, no-op removal, dedup.

:func:`optimize` rewrites an ``onnx_ir.Model`` in place, framework-free:

- **folding**: a node whose inputs are all constants (Constant outputs, earlier folds, and the
  initializers the caller names as foldable, never the weights) is evaluated once; its result
  becomes an initializer (a Constant node inside subgraphs);
- **static shapes**: ``Shape`` / ``Size`` of a value whose shape is fully known is a constant, so
  ``Shape -> Gather -> Concat -> Reshape`` chains on static dims fold away;
- **no-ops**: Identity, Cast to the same type, Reshape / Expand to the same static shape, a
  Reshape whose constant target copies (0), repeats or infers (-1) each of its input's dims,
  Transpose with the identity permutation, Concat of one input, a Slice that keeps everything,
  Reshape of a Reshape, a Transpose of a Transpose (one Transpose, the permutations composed),
  and a MatMul between Reshapes that flatten and restore leading dims (:mod:`onnxport.exporting.passes.flat_matmul`);
- **window padding**: a constant-mode Pad (constant pads and value) padding only the spatial dims,
  by non-negative amounts, whose only reader is (directly or through a Transpose read by it
  alone, the pads permuted) a MaxPool (pad value -inf or the type's lowest, or 0 around values
  an op makes non-negative: Relu, Abs, Sigmoid, Softplus, Exp, Clip at >= 0; no dilation),
  an AveragePool (pad value 0; the pool counts padding, or has none) or a Conv (pad value 0) as
  its data, joins that node's ``pads``; a Slice (constant, step 1, spatial axes) keeping a range
  of the windows of such a node (its only reader) shrinks the node's ``pads`` instead. Both need
  ``auto_pad`` NOTSET or VALID, ``ceil_mode`` 0 and MaxPool's indices unread (and a pooling's
  pads stay smaller than its kernel, as onnxruntime requires); every window then covers the same
  elements and padding as before;
- **dedup**: identical Constant nodes and folded constants become one; dead nodes go.

Results too large to be worth storing (more than ``fold_limit`` elements and larger than the
inputs they come from, say a ConstantOfShape of a big shape) are left to the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import onnx_ir as ir

from ...plugin.opfacts import NO_FOLD_OPS, mark_not_trainable
from ..builder import array_tensor
from .flat_matmul import unflatten_matmul

#: ops never folded: random, or with effects beyond their outputs (:mod:`onnxport.plugin.opfacts`), and
#: Constant (already a constant)
_NO_FOLD = NO_FOLD_OPS | {"Constant"}


def _attr(node: ir.Node, name: str, default: Any = None) -> Any:
    a = node.attributes.get(name)
    return default if a is None else a.value


def _bcast_shape(node: ir.Node, x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(s) for s in shape))).copy()


def _gather(node: ir.Node, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return np.take(x, idx.astype(np.int64), axis=_attr(node, "axis", 0))


def _concat(node: ir.Node, *xs: np.ndarray) -> np.ndarray:
    return np.concatenate(xs, axis=_attr(node, "axis"))


def _reshape(node: ir.Node, x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    shape = [int(s) for s in shape]
    if not _attr(node, "allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _unsqueeze(node: ir.Node, x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    rank = x.ndim + len(axes)
    for a in sorted(int(a) + rank if a < 0 else int(a) for a in axes):
        x = np.expand_dims(x, a)
    return x


def _squeeze(node: ir.Node, x: np.ndarray, axes: np.ndarray | None = None) -> np.ndarray:
    return np.squeeze(x) if axes is None else np.squeeze(x, tuple(int(a) for a in axes))


def _slice(node: ir.Node, x: np.ndarray, starts, ends, axes=None, steps=None) -> np.ndarray:
    axes = range(len(starts)) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[a] = slice(int(s), int(e), st)
    return x[tuple(index)]


def _range(node: ir.Node, start, limit, delta) -> np.ndarray:
    return np.arange(start, limit, delta, dtype=np.asarray(start).dtype)


def _cast(node: ir.Node, x: np.ndarray) -> np.ndarray:
    return x.astype(ir.DataType(_attr(node, "to")).numpy())


def _constant_of_shape(node: ir.Node, shape: np.ndarray) -> np.ndarray:
    value = _attr(node, "value")
    fill = value.numpy().reshape(-1)[0] if value is not None else np.float32(0)
    return np.full([int(s) for s in shape], fill, dtype=np.asarray(fill).dtype)


def _where(node: ir.Node, c, a, b) -> np.ndarray:
    return np.where(c, a, b)


def _binary(fn: Callable) -> Callable:
    return lambda node, a, b: np.asarray(fn(a, b)).astype(np.result_type(a, b), copy=False)


def _div(node: ir.Node, a, b) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):  # ONNX integer Div truncates
        return (np.trunc(a / b)).astype(a.dtype)
    return np.asarray(a / b, dtype=a.dtype)


#: numpy forms of the ops that exporters' shape and mask computations use
_NUMPY: dict[str, Callable[..., Any]] = {
    "Identity": lambda node, x: x,
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply), "Div": _div,
    "Equal": lambda node, a, b: np.equal(a, b), "Less": lambda node, a, b: np.less(a, b),
    "LessOrEqual": lambda node, a, b: np.less_equal(a, b), "Greater": lambda node, a, b: np.greater(a, b),
    "GreaterOrEqual": lambda node, a, b: np.greater_equal(a, b),
    "And": lambda node, a, b: np.logical_and(a, b), "Or": lambda node, a, b: np.logical_or(a, b),
    "Not": lambda node, a: np.logical_not(a), "Neg": lambda node, a: np.negative(a),
    "Max": lambda node, *xs: np.maximum.reduce(np.broadcast_arrays(*xs)),
    "Min": lambda node, *xs: np.minimum.reduce(np.broadcast_arrays(*xs)),
    "Where": _where, "Cast": _cast, "Gather": _gather, "Concat": _concat, "Reshape": _reshape,
    "Unsqueeze": _unsqueeze, "Squeeze": _squeeze, "Slice": _slice, "Range": _range,
    "Expand": _bcast_shape, "ConstantOfShape": _constant_of_shape,
    "Transpose": lambda node, x: np.transpose(x, _attr(node, "perm")),
}


#: ops whose windows read padded input: a Pad before them or a Slice after them folds into ``pads``
_WINDOWED = ("MaxPool", "AveragePool", "Conv")


def _window_pads(node: ir.Node, nd: int) -> list[int] | None:
    """A pooling / Conv node's explicit begin+end pads, or None when they do not fold (auto_pad
    SAME_*, ceil_mode, MaxPool indices read)."""
    if _attr(node, "auto_pad", "NOTSET") not in ("NOTSET", "VALID") or _attr(node, "ceil_mode", 0):
        return None
    if len(node.outputs) > 1 and any(o.uses() or o.is_graph_output() for o in node.outputs[1:]):
        return None
    pads = [0] * (2 * nd) if _attr(node, "auto_pad", "NOTSET") == "VALID" else list(_attr(node, "pads") or [0] * (2 * nd))
    return [int(p) for p in pads] if len(pads) == 2 * nd else None


def _set_pads(node: ir.Node, pads: list[int]) -> None:
    node.attributes["pads"] = ir.AttrInt64s("pads", pads)
    node.attributes.pop("auto_pad", None)


def _lowest(dtype: np.dtype) -> Any:
    try:
        return np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else np.finfo(dtype).min
    except (TypeError, ValueError):  # a type numpy has no limits for (bfloat16, float8)
        return None


def _constant_attribute(node: ir.Node) -> np.ndarray | None:
    """The value of a Constant node read from a file (its output has no ``const_value``)."""
    for name, dtype in (("value", None), ("value_float", np.float32), ("value_floats", np.float32),
                        ("value_int", np.int64), ("value_ints", np.int64)):
        a = node.attributes.get(name)
        if a is not None:
            return a.value.numpy() if dtype is None else np.asarray(a.value, dtype=dtype)
    return None


def _reference(node: ir.Node, inputs: list[np.ndarray | None], opset: int) -> list[np.ndarray]:
    """Evaluate one node with ``onnx.reference`` (ops without a numpy form here)."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = [f"i{i}" if x is not None else "" for i, x in enumerate(inputs)]
    outs = [f"o{i}" for i in range(len(node.outputs))]
    proto = ir.serde.serialize_node(node)
    del proto.input[:]
    proto.input.extend(names)
    del proto.output[:]
    proto.output.extend(outs)
    graph = helper.make_graph([proto], "fold", [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None)
                                                 for n in names if n], [helper.make_value_info(o, onnx.TypeProto()) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {n: x for n, x in zip(names, inputs) if n}
    return list(ReferenceEvaluator(model).run(None, feeds))


class _Folder:
    def __init__(self, model: ir.Model, foldable: set[str], fold_limit: int):
        self.model = model
        self.opset = model.opset_imports.get("", 18)
        self.fold_limit = fold_limit
        self.foldable = foldable
        self.stats = {"folded": 0, "removed": 0, "deduplicated": 0}

    def const(self, v: ir.Value | None) -> np.ndarray | None:
        if v is None:
            return None
        producer = v.producer()
        if producer is not None and producer.op_type == "Constant" and not producer.domain:
            return v.const_value.numpy() if v.const_value is not None else _constant_attribute(producer)
        if producer is None and v.const_value is not None and (v.name in self.foldable):
            return v.const_value.numpy()
        return None

    # -- rewrites --------------------------------------------------------------------------------
    def bypass(self, graph: ir.Graph, node: ir.Node, source: ir.Value) -> bool:
        """Drop ``node`` (one output), reading ``source`` instead of its output."""
        out = node.outputs[0]
        if out.is_graph_output():
            # the graph output keeps its name: only when source can take that name
            if source.is_graph_input() or source.is_graph_output() or source.producer() is None:
                return False
            name = out.name
            out.replace_all_uses_with(source, replace_graph_outputs=True)
            out.name = None
            source.name = name
            # the same tensor: a graph output keeps its declared type where the source had none
            source.dtype = source.dtype if source.dtype is not None else out.dtype
            source.shape = source.shape if source.shape is not None else out.shape
        else:
            out.replace_all_uses_with(source)
        graph.remove(node, safe=True)
        self.stats["removed"] += 1
        return True

    def fold(self, graph: ir.Graph, node: ir.Node, results: list[np.ndarray], main: bool) -> None:
        """Replace ``node`` by its constant results."""
        news = []
        for out, arr in zip(node.outputs, results):
            arr = np.asarray(arr)
            if out.dtype is not None and out.dtype.numpy() != arr.dtype:
                arr = arr.astype(out.dtype.numpy())
            tensor = array_tensor(arr, name=out.name)
            if main:
                new = ir.Value(name=None, type=ir.TensorType(tensor.dtype), shape=ir.Shape(list(arr.shape)),
                               const_value=tensor)
                news.append(new)
            else:
                c = ir.Node("", "Constant", [], attributes=[ir.AttrTensor("value", tensor)], name=f"{node.name}_folded")
                c.outputs[0].const_value = tensor
                c.outputs[0].dtype = tensor.dtype
                c.outputs[0].shape = ir.Shape(list(arr.shape))
                graph.insert_before(node, c)
                news.append(c.outputs[0])
        for out, new in zip(node.outputs, news):
            name = out.name
            out.replace_all_uses_with(new, replace_graph_outputs=True)
            out.name = None
            new.name = name
            if main:  # computed from constants only (weights never fold): no weight to train
                mark_not_trainable(new)
                graph.register_initializer(new)
                self.foldable.add(name)
        graph.remove(node, safe=True)
        self.stats["folded"] += 1

    def evaluate(self, node: ir.Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
        fn = _NUMPY.get(node.op_type)
        try:
            if fn is not None and len(node.outputs) == 1:
                while inputs and inputs[-1] is None:
                    inputs = inputs[:-1]
                if node.op_type == "Squeeze" or all(x is not None for x in inputs):
                    return [fn(node, *inputs)]
            results = _reference(node, inputs, self.opset)
        except Exception:  # noqa: BLE001 - a node that cannot be evaluated here stays for the runtime
            return None
        # a sequence (SplitToSequence, SequenceConstruct ...) is no tensor: it stays a node
        return None if any(isinstance(r, (list, tuple)) or r is None for r in results) else results

    def fold_pad(self, graph: ir.Graph, node: ir.Node) -> None:
        """A constant Pad of spatial dims read only by ``node`` (a pooling / Conv), directly or
        through a Transpose read only by it, joins ``node``'s pads."""
        x = node.inputs[0] if node.inputs else None
        pad = x.producer() if x is not None else None
        perm = None
        if (pad is not None and pad.op_type == "Transpose" and not pad.domain and _attr(pad, "perm") is not None
                and len(x.uses()) == 1 and not x.is_graph_output() and pad.inputs[0] is not None):
            perm = [int(p) for p in _attr(pad, "perm")]  # node reads Transpose(Pad(...), perm)
            transpose, x = pad, pad.inputs[0]
            pad = x.producer()
        if (pad is None or pad.op_type != "Pad" or pad.domain or len(x.uses()) != 1 or x.is_graph_output()
                or _attr(pad, "mode", "constant") != "constant" or len(pad.inputs) < 2 or x.shape is None):
            return
        rank, ins = len(x.shape), list(pad.inputs) + [None] * (4 - len(pad.inputs))
        pads, value, axes = self.const(ins[1]), self.const(ins[2]), self.const(ins[3])
        if pads is None or (ins[2] is not None and value is None) or (ins[3] is not None and axes is None):
            return
        axes = list(range(rank)) if axes is None else [int(a) % rank for a in axes.reshape(-1)]
        pads = [int(p) for p in pads.reshape(-1)]
        if rank < 3 or len(pads) != 2 * len(axes) or len(set(axes)) != len(axes) or (perm and len(perm) != rank):
            return
        full = [0] * (2 * rank)
        for i, a in enumerate(axes):
            full[a], full[rank + a] = pads[i], pads[len(axes) + i]
        if perm is not None:  # in the Transpose's output axes: its axis i is the Pad's axis perm[i]
            full = [full[p] for p in perm] + [full[rank + p] for p in perm]
        nd = rank - 2
        own = _window_pads(node, nd)
        if own is None or any(full[a] for a in (0, 1, rank, rank + 1)) or min(full) < 0:
            return
        fill = 0 if value is None else value.reshape(-1)[0]
        if node.op_type == "MaxPool":
            dtype = x.dtype.numpy() if x.dtype is not None else np.asarray(fill).dtype
            lowest = _lowest(dtype)
            if not ((lowest is not None and fill == lowest) or (np.issubdtype(dtype, np.floating) and np.isneginf(fill))
                    or (fill == 0 and self.non_negative(pad.inputs[0])
                        and all(int(d) == 1 for d in _attr(node, "dilations", [1])))):
                return  # (zeros next to non-negative values change no window's maximum)
        elif fill != 0:
            return
        if node.op_type == "AveragePool" and not _attr(node, "count_include_pad", 0) and any(own):
            return  # padding that does not count next to padded zeros that do
        new = [p + q for p, q in zip(own, full[2:rank] + full[rank + 2:])]
        kernel = _attr(node, "kernel_shape")
        if node.op_type != "Conv" and (kernel is None or any(p >= k for p, k in zip(new, list(kernel) * 2))):
            return  # onnxruntime runs pooling with pads smaller than the kernel only
        if node.op_type == "AveragePool":
            node.attributes["count_include_pad"] = ir.AttrInt64("count_include_pad", 1)
        _set_pads(node, new)
        if perm is None:
            node.replace_input_with(0, pad.inputs[0])
        else:
            transpose.replace_input_with(0, pad.inputs[0])
            src, out = pad.inputs[0], transpose.outputs[0]
            out.shape = None if src.shape is None else ir.Shape([src.shape[p] for p in perm])
            out.type = out.type or src.type
        graph.remove(pad, safe=True)
        self.stats["removed"] += 1

    def non_negative(self, v: ir.Value | None) -> bool:
        """Whether every element of ``v`` is >= 0 by the op computing it (Relu, Abs, Sigmoid,
        Softplus, Exp, a Clip with a constant minimum >= 0)."""
        node = v.producer() if v is not None else None
        if node is None or node.domain:
            return False
        if node.op_type == "Clip":
            low = self.const(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] is not None else None
            return low is not None and low.size == 1 and float(low.reshape(-1)[0]) >= 0
        return node.op_type in ("Relu", "Abs", "Sigmoid", "Softplus", "Exp")

    def fold_slice(self, graph: ir.Graph, node: ir.Node) -> bool:
        """A Slice keeping a range of a pooling / Conv node's windows (its only reader): the node's
        pads shrink by what the dropped windows' strides spanned; True when the Slice is gone."""
        x = node.inputs[0] if node.inputs else None
        src = x.producer() if x is not None else None
        if (src is None or src.op_type not in _WINDOWED or src.domain or x is not src.outputs[0]
                or len(x.uses()) != 1 or x.is_graph_output() or x.shape is None or len(node.inputs) < 3):
            return False
        rank = len(x.shape)
        ins = list(node.inputs) + [None] * (5 - len(node.inputs))
        starts, ends, axes, steps = (self.const(v) for v in ins[1:5])
        if starts is None or ends is None or (ins[3] is not None and axes is None) or (ins[4] is not None and steps is None):
            return False
        starts, ends = starts.reshape(-1).tolist(), ends.reshape(-1).tolist()
        axes = list(range(len(starts))) if axes is None else [int(a) % rank for a in axes.reshape(-1)]
        steps = [1] * len(starts) if steps is None else steps.reshape(-1).tolist()
        nd = rank - 2
        pads = _window_pads(src, nd)
        strides = list(_attr(src, "strides") or [1] * nd)
        if pads is None or len(set(axes)) != len(axes) or len(strides) != nd:
            return False
        dims = list(x.shape)
        for a, start, end, step in zip(axes, starts, ends, steps):
            n = dims[a]
            if a < 2 or step != 1 or not isinstance(n, int):
                return False
            start = min(max(start + n if start < 0 else start, 0), n)
            end = min(max(end + n if end < 0 else end, 0), n)
            if end <= start:
                return False
            pads[a - 2] -= start * strides[a - 2]
            pads[a - 2 + nd] -= (n - end) * strides[a - 2]
            dims[a] = end - start
        if min(pads) < 0:
            return False
        _set_pads(src, pads)
        x.shape = ir.Shape(dims)
        return self.bypass(graph, node, x)

    def keeps_shape(self, node: ir.Node) -> bool:
        """Whether a Reshape's constant target keeps its input's shape: as many dims, each 0
        (copied), the input's own static size, or one -1 (then the input's size)."""
        x, target = node.inputs[0], self.const(node.inputs[1]) if len(node.inputs) > 1 else None
        if x is None or x.shape is None or target is None or _attr(node, "allowzero", 0):
            return False
        target = [int(t) for t in target.reshape(-1)]
        if len(target) != len(x.shape) or target.count(-1) > 1:
            return False
        return all(t in (0, -1) or (isinstance(d, int) and t == d) for t, d in zip(target, x.shape))

    def static_shape(self, v: ir.Value) -> list[int] | None:
        if v.shape is None or not all(isinstance(d, int) for d in v.shape):
            return None
        return [int(d) for d in v.shape]

    def simplify(self, graph: ir.Graph, node: ir.Node) -> bool:
        """No-op removal; True when the node is gone."""
        op = node.op_type
        ins = node.inputs
        out = node.outputs[0] if node.outputs else None
        if op in _WINDOWED:
            self.fold_pad(graph, node)
        if op == "Slice" and self.fold_slice(graph, node):
            return True
        if op == "Identity":
            return self.bypass(graph, node, ins[0])
        if op == "Cast" and ins[0].dtype is not None and ins[0].dtype == ir.DataType(_attr(node, "to")):
            return self.bypass(graph, node, ins[0])
        if op == "Transpose":
            perm = _attr(node, "perm")
            first = ins[0].producer()
            if (perm is not None and first is not None and first.op_type == "Transpose" and not first.domain
                    and _attr(first, "perm") is not None and len(ins[0].uses()) == 1 and not ins[0].is_graph_output()):
                # two Transposes in a row are one: y axis i is x axis inner[perm[i]]
                inner = [int(p) for p in _attr(first, "perm")]
                perm = [inner[int(p)] for p in perm]
                node.attributes["perm"] = ir.AttrInt64s("perm", perm)
                node.replace_input_with(0, first.inputs[0])
                graph.remove(first, safe=True)
                self.stats["removed"] += 1
            if perm is not None and list(perm) == list(range(len(perm))):
                return self.bypass(graph, node, node.inputs[0])  # the input after composing
        if op == "Concat" and len(ins) == 1:
            return self.bypass(graph, node, ins[0])
        reversing = op == "Slice" and len(ins) > 4 and (self.const(ins[4]) is None or (self.const(ins[4]) < 0).any())
        if op in ("Reshape", "Expand", "Slice") and out is not None and not reversing:
            src, dst = self.static_shape(ins[0]), self.static_shape(out)
            if src is not None and src == dst and src.count(0) == 0:
                return self.bypass(graph, node, ins[0])
        if op == "Unsqueeze" and len(ins) == 2:
            first = ins[0].producer()
            outer = self.const(ins[1])
            inner = self.const(first.inputs[1]) if first is not None and first.op_type == "Unsqueeze" and len(first.inputs) == 2 else None
            if (inner is not None and outer is not None and not first.domain and len(ins[0].uses()) == 1
                    and not ins[0].is_graph_output() and out is not None and out.shape is not None):
                # one Unsqueeze inserting both sets of axes: mark the new dims in the final order
                rank = len(out.shape)
                dims: list[bool] = [False] * (rank - len(inner) - len(outer))
                for axes in (inner, outer):
                    r = len(dims) + len(axes)
                    for a in sorted(int(a) + r if a < 0 else int(a) for a in axes):
                        dims.insert(a, True)
                merged = np.asarray([i for i, new in enumerate(dims) if new], dtype=np.int64)
                c = ir.Node("", "Constant", [], attributes=[ir.AttrTensor("value", ir.tensor(merged))],
                            name=f"{node.name}_axes")
                c.outputs[0].const_value = ir.tensor(merged)
                c.outputs[0].dtype, c.outputs[0].shape = ir.DataType.INT64, ir.Shape([len(merged)])
                c.outputs[0].name = f"{out.name}_axes"
                graph.insert_before(node, c)
                node.replace_input_with(0, first.inputs[0])
                node.replace_input_with(1, c.outputs[0])
                graph.remove(first, safe=True)
                self.stats["removed"] += 1
        if op == "Reshape" and (mm := unflatten_matmul(node)) is not None:
            return self.bypass(graph, node, mm.outputs[0])
        if op == "Reshape" and self.keeps_shape(node):
            return self.bypass(graph, node, ins[0])
        if op == "Reshape":
            first = ins[0].producer()
            shape = self.const(ins[1])
            if (first is not None and first.op_type == "Reshape" and not first.domain and len(ins[0].uses()) == 1
                    and not ins[0].is_graph_output() and shape is not None and 0 not in shape.tolist()):
                node.replace_input_with(0, first.inputs[0])
                graph.remove(first, safe=True)
                self.stats["removed"] += 1
        return False

    # -- the pass ---------------------------------------------------------------------------------
    def run_graph(self, graph: ir.Graph, main: bool) -> None:
        for node in list(graph):
            if node.graph is None:
                continue  # removed by an earlier rewrite
            for attr in node.attributes.values():
                if attr.type == ir.AttributeType.GRAPH:
                    self.run_graph(attr.value, False)
                elif attr.type == ir.AttributeType.GRAPHS:
                    for sub in attr.value:
                        self.run_graph(sub, False)
            if node.domain or node.op_type in _NO_FOLD:
                continue
            if node.op_type in ("Shape", "Size") and node.inputs and node.inputs[0] is not None:
                dims = self.static_shape(node.inputs[0])
                if dims is not None and not node.outputs[0].is_graph_output():
                    if node.op_type == "Size":
                        self.fold(graph, node, [np.asarray(int(np.prod(dims)), dtype=np.int64)], main)
                        continue
                    start, end = _attr(node, "start", 0), _attr(node, "end", None)
                    self.fold(graph, node, [np.asarray(dims[start:end], dtype=np.int64)], main)
                    continue
            if self.simplify(graph, node):
                continue
            values = [self.const(v) for v in node.inputs]
            if not node.inputs or any(v is not None and c is None for v, c in zip(node.inputs, values)):
                continue
            if any(o.is_graph_output() for o in node.outputs):
                continue  # a graph output stays a node's output
            results = self.evaluate(node, values)
            if results is None:
                continue
            size_in = sum(int(np.asarray(x).size) for x in values if x is not None)
            if any(np.asarray(r).size > max(self.fold_limit, size_in) for r in results):
                continue
            self.fold(graph, node, results, main)
        self.dedup(graph, main)
        self.dead(graph)

    def dedup(self, graph: ir.Graph, main: bool) -> None:
        seen: dict[tuple[Any, ...], ir.Value] = {}
        for node in list(graph):
            if node.op_type != "Constant" or node.domain or node.outputs[0].const_value is None:
                continue
            out = node.outputs[0]
            arr = out.const_value.numpy()
            key = (arr.dtype.str, arr.shape, arr.tobytes())
            if key in seen and not out.is_graph_output():
                out.replace_all_uses_with(seen[key])
                graph.remove(node, safe=True)
                self.stats["deduplicated"] += 1
            else:
                seen.setdefault(key, out)
        if not main:
            return
        for name in list(graph.initializers):
            if name not in self.foldable:
                continue
            v = graph.initializers[name]
            arr = v.const_value.numpy()
            key = ("init", arr.dtype.str, arr.shape, arr.tobytes())
            if key in seen and not v.is_graph_output():
                v.replace_all_uses_with(seen[key])
                graph.initializers.pop(name)
                self.stats["deduplicated"] += 1
            else:
                seen.setdefault(key, v)

    def dead(self, graph: ir.Graph) -> None:
        for node in reversed(list(graph)):
            if all(not o.uses() and not o.is_graph_output() for o in node.outputs):
                graph.remove(node, safe=True)
                self.stats["removed"] += 1
        for name in list(graph.initializers):
            v = graph.initializers[name]
            if name in self.foldable and not v.uses() and not v.is_graph_output():
                graph.initializers.pop(name)


def optimize(model: ir.Model, *, foldable: Iterable[str] = (), fold_limit: int = 1 << 16) -> dict[str, int]:
    """Fold constants, static shapes and no-ops of ``model`` in place; returns counts of what changed.

    :param foldable: names of initializers that are constants (lifted literals), not weights:
        nodes reading them may fold. Weights are never folded into new tensors.
    :param fold_limit: results with more elements than this (and than their inputs) stay nodes.
    """
    folder = _Folder(model, set(foldable), fold_limit)
    folder.run_graph(model.graph, True)
    return folder.stats


def _constant_array(v: ir.Value | None) -> np.ndarray | None:
    """The value of an initializer or of a Constant node's output, else None."""
    if v is None or v.const_value is None:
        return None
    producer = v.producer()
    if producer is not None and (producer.op_type != "Constant" or producer.domain):
        return None
    if producer is None and not v.is_initializer():
        return None
    return v.const_value.numpy()


def _fresh_name(graph: ir.Graph, base: str) -> str:
    taken = set(graph.initializers) | {v.name for v in graph.inputs} | {o.name for n in graph for o in n.outputs}
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


def _put_initializer(graph: ir.Graph, old: ir.Value | None, arr: np.ndarray, base: str) -> ir.Value:
    """``arr`` in ``old``'s place when ``old`` is an initializer read once, else a new initializer."""
    if old is not None and old.is_initializer() and len(old.uses()) == 1 and not old.is_graph_output():
        old.const_value = ir.tensor(arr, name=old.name)
        old.shape = ir.Shape(list(arr.shape))
        return old
    name = _fresh_name(graph, base)
    new = ir.Value(name=name, type=ir.TensorType(ir.DataType.from_numpy(arr.dtype)),
                   shape=ir.Shape(list(arr.shape)), const_value=ir.tensor(arr, name=name))
    graph.register_initializer(new)
    return new


def fold_batchnorm(model: ir.Model) -> int:
    """Fold each inference BatchNormalization that follows a Conv into the Conv; returns the count.

    The Conv's output must feed only the BatchNormalization, and the Conv's weight and bias and
    the BatchNormalization's scale, bias, mean and variance must be constants. The Conv gets
    ``W * s`` and ``(b - mean) * s + beta`` with ``s = scale / sqrt(var + epsilon)``; a weight or
    bias read only by this Conv is rewritten in place (keeping its name), a shared one is copied.
    The BatchNormalization's parameters disappear from the graph (the reason this is opt-in).
    """
    graph = model.graph
    count = 0
    replaced: list[ir.Value] = []
    for bn in list(graph):
        if bn.op_type != "BatchNormalization" or bn.domain or len(bn.outputs) != 1 or _attr(bn, "training_mode", 0):
            continue
        x = bn.inputs[0]
        conv = x.producer() if x is not None else None
        if conv is None or conv.op_type != "Conv" or conv.domain or len(x.uses()) != 1 or x.is_graph_output():
            continue
        w_val = conv.inputs[1]
        b_val = conv.inputs[2] if len(conv.inputs) > 2 else None
        w = _constant_array(w_val)
        b = _constant_array(b_val) if b_val is not None else None
        params = [_constant_array(v) for v in bn.inputs[1:5]]
        if w is None or (b_val is not None and b is None) or any(p is None for p in params):
            continue
        scale, beta, mean, var = (p.astype(np.float64) for p in params)
        s = scale / np.sqrt(var + float(_attr(bn, "epsilon", 1e-5)))
        if s.shape != (w.shape[0],):
            continue
        bias = np.zeros(w.shape[0]) if b is None else b.astype(np.float64)
        new_w = (w.astype(np.float64) * s.reshape([-1] + [1] * (w.ndim - 1))).astype(w.dtype)
        new_b = ((bias - mean) * s + beta).astype(w.dtype)
        w_name = w_val.name or "conv.weight"
        conv.replace_input_with(1, _put_initializer(graph, w_val, new_w, f"{w_name}.bn_folded"))
        b_base = w_name[: -len("weight")] + "bias" if w_name.endswith("weight") else f"{w_name}.bias"
        new_bias = _put_initializer(graph, b_val, new_b, b_base)
        if b_val is None:
            conv.resize_inputs(3)
        conv.replace_input_with(2, new_bias)
        replaced.extend(v for v in (w_val, b_val, *bn.inputs[1:5]) if v is not None)
        out = bn.outputs[0]
        name = out.name
        out.replace_all_uses_with(x, replace_graph_outputs=True)
        out.name = None
        x.name = name
        graph.remove(bn, safe=True)
        count += 1
    for v in replaced:  # the BatchNormalizations' parameters and the replaced Conv weights
        if v.uses() or v.is_graph_output() or v.is_graph_input():
            continue
        producer = v.producer()
        if producer is not None and producer.graph is graph:
            graph.remove(producer, safe=True)
        elif v.is_initializer() and graph.initializers.get(v.name) is v:
            graph.initializers.pop(v.name)
    return count


def constants_to_initializers(model: ir.Model) -> int:
    """Each Constant node of the main graph becomes an initializer of the same name (marked as
    no trainable weight); returns the count. A Constant that is a graph output, a sparse one and
    those inside subgraphs and functions stay nodes."""
    graph = model.graph
    count = 0
    for node in list(graph):
        if node.op_type != "Constant" or node.domain or len(node.outputs) != 1:
            continue
        out = node.outputs[0]
        if out.is_graph_output() or not out.name or "sparse_value" in node.attributes:
            continue
        attr = node.attributes.get("value")
        if attr is not None:
            tensor = attr.value
        else:
            arr = _constant_attribute(node)
            if arr is None:
                continue
            tensor = ir.tensor(arr)
        name = out.name
        new = ir.Value(name=None, type=ir.TensorType(tensor.dtype), shape=ir.Shape(list(tensor.shape)),
                       const_value=tensor)
        out.replace_all_uses_with(new)
        out.name = None
        graph.remove(node, safe=True)
        new.name = name
        mark_not_trainable(new)
        graph.register_initializer(new)
        count += 1
    return count
