"""Channels-last execution of 2-D image graphs: a layout plan made once at import.

ONNX image ops are NCHW; TensorFlow's CPU kernels convolve and pool NHWC only, so a Conv read as
NCHW pays a transpose on each side. The plan keeps 4-D activations NHWC from a Conv on, through
the ops below that have a channels-last form, and turns a value back to NCHW only where another
op reads it and at the graph outputs: a CNN's traced graph has no Transpose between consecutive
convolutions. Users never see an NHWC tensor: the plan changes how the traced function computes,
not what it takes or returns.

The weights of ungrouped channels-last Convs are read spatial-major (HWIO): small import-time
constants are laid out once at import, variables keep their ONNX (OIHW) shape and are transposed
where they are read (a weight transpose, never an activation one).

Only the main graph is planned; a value that an If/Loop/Scan body reads from the main graph is
never held channels last (bodies read outer values directly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from .ops.import_ import conv as _conv
from .ops.import_ import normalization as _norm
from .ops.import_ import pool as _pool

#: elementwise ops of one tensor input (the rest scalars): they run on NHWC data unchanged
UNARY = frozenset({
    "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Celu", "Gelu", "HardSigmoid", "HardSwish",
    "Softplus", "Softsign", "Mish", "Swish", "ThresholdedRelu", "Shrink", "Clip", "Identity", "Abs",
    "Neg", "Exp", "Log", "Sqrt", "Erf", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Cast", "Dropout",
})
#: broadcasting elementwise ops: the other operands are brought to NHWC (cheap for constants)
BROADCAST = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean", "PRelu", "Pow"})

_TO_LAST = (0, 2, 3, 1)
_TO_FIRST = (0, 3, 1, 2)
#: OIHW -> HWIO
HWIO = (2, 3, 1, 0)


def to_last(x: Any) -> Any:
    """NCHW -> NHWC; a lower-rank operand is first given leading unit dims (as broadcasting does)."""
    if isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x)
        if x.ndim < 4:
            x = x.reshape((1,) * (4 - x.ndim) + tuple(x.shape))
        return np.transpose(x, _TO_LAST)
    if len(x.shape) < 4:
        x = tf.reshape(x, [1] * (4 - len(x.shape)) + x.shape.as_list())
    return tf.transpose(x, _TO_LAST)


def to_first(x: Any) -> Any:
    """NHWC -> NCHW."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.transpose(x, _TO_FIRST)
    return tf.transpose(x, _TO_FIRST)


CONVERT: dict[str, Callable[[Any], Any]] = {"last": to_last, "first": to_first}


# -- channels-last forms of the layout-sensitive ops -----------------------------------------------
def _conv_cl(ctx, x, w, b=None, **attrs):
    return _conv.conv_values(x, w, b, cl=True, **attrs)


def _conv_cl_hwio(ctx, x, w, b=None, **attrs):
    return _conv.conv_values(x, w, b, cl=True, hwio=True, **attrs)


def _max_pool_cl(ctx, x, **attrs):
    y = _pool.max_pool_values(x, cl=True, **attrs)
    return y if ctx.num_outputs == 1 else (y, None)


def _average_pool_cl(ctx, x, **attrs):
    return _pool.average_pool_values(x, cl=True, **attrs)


def _global_average_pool_cl(ctx, x):
    return tf.reduce_mean(x, axis=(1, 2), keepdims=True)


def _global_max_pool_cl(ctx, x):
    return tf.reduce_max(x, axis=(1, 2), keepdims=True)


def _concat_cl(ctx, *xs, axis):
    return tf.concat([tf.convert_to_tensor(x) for x in xs], axis=3)


def _batch_norm_cl(fn: Callable) -> Callable:
    """Inference BatchNormalization per channel on the last axis; in training mode the ONNX form."""

    def run(ctx, x, scale, b, mean, var, *, epsilon, momentum, training_mode):
        if training_mode or ctx.training:
            y = fn(ctx, to_first(x), scale, b, mean, var, epsilon=epsilon, momentum=momentum,
                   training_mode=training_mode)
            return to_last(y if ctx.num_outputs == 1 else y[0])
        x = tf.convert_to_tensor(x)
        dt = x.dtype
        inv = tf.cast(scale, dt) * tf.math.rsqrt(tf.cast(var, dt) + tf.constant(epsilon, dt))
        return (x - tf.cast(mean, dt)) * inv + tf.cast(b, dt)

    return run


def _shuffle_cl(groups: int) -> Callable:
    """A channel shuffle (Reshape to [N, g, C/g, H, W], Transpose 1<->2, Reshape back) on NHWC."""

    def run(ctx, x, shape, **attrs):
        n, h, w, c = x.shape
        shape = tf.shape(x)
        y = tf.reshape(x, tf.concat([shape[:3], [groups, c // groups]], 0))
        return tf.reshape(tf.transpose(y, [0, 1, 2, 4, 3]), shape)

    return run


def _transpose_from_last(ctx, x, *, perm):
    """A Transpose of an NHWC value: one transpose by the composed permutation (ONNX's ``perm``
    applied to the NCHW view), instead of converting back first."""
    perm = list(perm) if perm is not None else [3, 2, 1, 0]
    return tf.transpose(x, [_TO_FIRST[p] for p in perm])


def _passed_on(ctx, x, *rest, **attrs):
    """The rest of a pattern computed by its first node: the value passes through."""
    return x


def _lrn_cl(ctx, x, *, alpha, beta, bias, size):
    return _norm.lrn_values(x, alpha=alpha, beta=beta, bias=bias, size=size, axis=-1)


# -- the plan -------------------------------------------------------------------------------------
def _rank(v: ir.Value | None) -> int | None:
    return None if v is None or v.shape is None else len(v.shape)


def _floating(v: ir.Value) -> bool:
    return v.dtype is not None and v.dtype.is_floating_point()


def _only_first_used(node: ir.Node) -> bool:
    return all(not (v.uses() or v.is_graph_output()) for v in node.outputs[1:])


def _form(node: ir.Node, cl: set[ir.Value], fn: Callable) -> Callable | None:
    """The channels-last form of ``node`` given the NHWC values ``cl``, or None."""
    op = node.op_type
    x = node.inputs[0] if node.inputs else None
    if node.domain not in ("", "ai.onnx") or x is None or not _only_first_used(node):
        return None
    if op == "Conv":
        w = node.inputs[1]
        ok = _rank(x) == 4 and _rank(w) == 4 and _floating(x) and w.dtype == x.dtype
        return _conv_cl if ok else None
    if op in BROADCAST or op == "Concat":
        ranks = [_rank(v) for v in node.inputs]
        if _rank(node.outputs[0]) != 4 or None in ranks or not any(v in cl for v in node.inputs):
            return None
        if op == "Concat":
            axis = node.attributes["axis"].value if "axis" in node.attributes else None
            return _concat_cl if axis in (1, -3) and all(r == 4 for r in ranks) else None
        return fn
    if x not in cl:
        return None
    if op in UNARY:
        return fn if all(_rank(v) == 0 for v in node.inputs[1:] if v is not None) else None
    if op == "BatchNormalization" and len(node.inputs) == 5:
        return _batch_norm_cl(fn)
    if op in ("MaxPool", "AveragePool") and len(node.attributes["kernel_shape"].value) == 2:
        return _max_pool_cl if op == "MaxPool" else _average_pool_cl
    if op == "GlobalAveragePool":
        return _global_average_pool_cl
    if op == "GlobalMaxPool":
        return _global_max_pool_cl
    if op == "LRN":
        return _lrn_cl
    return None


def _input_conversions(node: ir.Node, cl: set[ir.Value]) -> tuple[str | None, ...]:
    """For a node run channels last: which inputs must be brought to NHWC first."""
    if node.op_type == "Conv":
        data = 1  # only the data input; weights stay OIHW
    elif node.op_type in BROADCAST or node.op_type == "Concat":
        data = len(node.inputs)
    else:
        data = 0  # unary ops (scalar extras), pooling, BatchNormalization: input 0 is NHWC already
    return tuple(
        "last" if i < data and v is not None and v not in cl and _rank(v) else None
        for i, v in enumerate(node.inputs)
    )


def plan(program: Any, static: dict[ir.Value, Any], params: set[ir.Value]) -> bool:  # noqa: C901
    """Rewrite ``program``'s steps (in place) to keep 4-D activations channels last where that
    pays; returns whether any step runs channels last.

    ``program.hwio`` lists the Conv weights (params or import-time constants) that the Convs
    read HWIO (:func:`lay_out`).
    """
    program.hwio = set()
    captured = _captured(program)
    cl: set[ir.Value] = set()
    by_node = {step.node: step for step in program.steps}
    done: set[ir.Node] = set()
    for step in program.steps:
        if step.node in done:
            continue
        shuffle = _channel_shuffle(step.node, cl, captured)
        if shuffle is not None:
            groups, rest = shuffle
            step.fn = _shuffle_cl(groups)
            for node in rest:
                by_node[node].fn = _passed_on
                done.add(node)
            cl.update(v for n in (step.node, *rest) for v in n.outputs)
            continue
        form = None if step.outputs[0] in captured else _form(step.node, cl, step.fn)
        if form is not None:
            step.fn = form
            step.convert = _input_conversions(step.node, cl)
            cl.add(step.outputs[0])
        elif (step.node.op_type == "Transpose" and step.node.domain in ("", "ai.onnx") and step.inputs[0] in cl
              and _rank(step.inputs[0]) == 4):
            step.fn = _transpose_from_last
        elif any(v in cl for v in step.inputs):
            step.convert = tuple("first" if v in cl else None for v in step.inputs)
    program.convert_out = [("first" if v in cl else None) for v in program.outputs]
    _plan_weights(program, static, params)
    return bool(cl)


def _sole_reader(v: ir.Value, captured: set[ir.Value]) -> ir.Node | None:
    uses = list(v.uses())
    if len(uses) != 1 or v in captured or v.is_graph_output():
        return None
    return uses[0].node


def _channel_shuffle(node: ir.Node, cl: set[ir.Value], captured: set[ir.Value]) -> tuple[int, list[ir.Node]] | None:
    """``Reshape(x, [N, g, C/g, H, W]) -> Transpose(perm=[0, 2, 1, 3, 4]) -> Reshape(.., x's
    shape)`` on an NHWC ``x`` whose intermediates nobody else reads: (g, [Transpose, Reshape])."""
    if node.op_type != "Reshape" or node.domain not in ("", "ai.onnx") or node.inputs[0] not in cl:
        return None
    x, mid = node.inputs[0], node.outputs[0]
    shape = [d if isinstance(d, int) else None for d in (x.shape or [])]
    split = [d if isinstance(d, int) else None for d in (mid.shape or [])]
    if len(shape) != 4 or len(split) != 5 or None in shape or None in split:
        return None
    n, c, h, w = shape
    if split[0] != n or split[3:] != [h, w] or split[1] * split[2] != c:
        return None
    t = _sole_reader(mid, captured)
    if t is None or t.op_type != "Transpose" or "perm" not in t.attributes:
        return None
    if list(t.attributes["perm"].value) != [0, 2, 1, 3, 4]:
        return None
    back = _sole_reader(t.outputs[0], captured)
    if back is None or back.op_type != "Reshape" or back.inputs[0] is not t.outputs[0]:
        return None
    out = back.outputs[0]
    if out.shape is None or [d if isinstance(d, int) else None for d in out.shape] != shape or out in captured:
        return None
    return split[1], [t, back]


def _captured(program: Any) -> set[ir.Value]:
    """Values read inside subgraphs (their own and the enclosing graphs')."""
    out: set[ir.Value] = set()
    for step in program.steps:
        for attr in step.node.attributes.values():
            graphs = ([attr.value] if attr.type == ir.AttributeType.GRAPH
                      else list(attr.value) if attr.type == ir.AttributeType.GRAPHS else [])
            for g in graphs:
                for node in ir.traversal.RecursiveGraphIterator(g):
                    out.update(v for v in node.inputs if v is not None)
    return out


def _plan_weights(program: Any, static: dict[ir.Value, Any], params: set[ir.Value]) -> None:
    """Ungrouped channels-last Convs whose weight is a param or an import-time constant read by
    such Convs only: they read the weight HWIO (``program.hwio``; :func:`lay_out`)."""
    convs: dict[ir.Value, list[Any]] = {}
    for step in program.steps:
        if step.fn is _conv_cl and "group" in step.attrs and int(step.attrs["group"]) == 1:
            convs.setdefault(step.inputs[1], []).append(step)
    for w, steps in convs.items():
        if w is None or w.is_graph_input() or len(w.uses()) != len(steps):
            continue
        if w not in params and not (isinstance(static.get(w), np.ndarray) and static[w].ndim == 4):
            continue
        program.hwio.add(w)
        for step in steps:
            step.fn = _conv_cl_hwio


def lay_out(x: Any) -> Any:
    """A weight's OIHW value as the HWIO array a planned Conv reads (numpy stays numpy)."""
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x.transpose(HWIO))
    return tf.transpose(x, HWIO)


def convert(x: Any, how: str | None) -> Any:
    """Apply a planned conversion to an array (numpy stays numpy)."""
    return x if how is None or x is None else CONVERT[how](x)
