"""Channels-last planning: which 4-D image values an importer keeps NHWC, and where they turn back.

ONNX image ops are NCHW; XLA:CPU and TensorFlow's CPU kernels convolve and pool NHWC, so a Conv
read as NCHW pays a transpose on each side, and those only cancel between two Convs. The plan keeps
4-D activations NHWC from a Conv on, through the ops that have a channels-last form, and turns a
value back to NCHW only where another op reads it and at the graph outputs. What an op needs to
run so is declared once, in :data:`LAYOUTS`; how a backend computes it is a declared variant of its
import primitive, registered through the registry like ``.module_builder``::

    @importer("Conv", since=22)
    def conv(ctx, x, w, b=None, **attrs): ...

    @conv.channels_last                  # x and the result NHWC
    def conv_nhwc(ctx, x, w, b=None, **attrs): ...

    @conv.channels_last(form="hwio")     # ... and an ungrouped Conv's weight read HWIO
    def conv_nhwc_hwio(ctx, x, w, b=None, **attrs): ...

Layout-agnostic elementwise ops need no variant: their primitive runs on NHWC data as it is. An op
whose backend declared no variant keeps its NCHW form (its NHWC inputs are converted back first).

The plan changes how a backend computes, not what a model takes or returns: inputs, outputs and
weights keep their ONNX layouts. Only the main graph is planned; a value that an If/Loop/Scan body
reads from the main graph is never held channels last (bodies read outer values directly).
Framework-free: the backend applies the conversions (:data:`TO_LAST`, :data:`TO_FIRST`) and lays
out the :attr:`LayoutPlan.hwio` weights with its own calls.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx_ir as ir

from ..plugin.registry import FORMS as FORMS  # re-exported: the registry checks declared forms

if TYPE_CHECKING:
    from .plan import ImportPlan

#: a conversion of an NCHW value (or a lower-rank operand, given leading unit dims) to NHWC
TO_LAST = "last"
#: a conversion of an NHWC value back to NCHW
TO_FIRST = "first"
#: NCHW -> NHWC, NHWC -> NCHW and OIHW -> HWIO as permutations
NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)
OIHW_TO_HWIO = (2, 3, 1, 0)


def _rank(v: ir.Value | None) -> int | None:
    return None if v is None or v.shape is None else len(v.shape)


def _attr(node: ir.Node, name: str, default: Any = None) -> Any:
    a = node.attributes.get(name)
    return default if a is None else a.value


def _scalar_rest(node: ir.Node) -> bool:
    return all(_rank(v) == 0 for v in node.inputs[1:] if v is not None)


def _broadcast(node: ir.Node) -> bool:
    return _rank(node.outputs[0]) == 4 and None not in [_rank(v) for v in node.inputs]


def _concat_channels(node: ir.Node) -> bool:
    return _broadcast(node) and _attr(node, "axis") in (1, -3) and all(_rank(v) == 4 for v in node.inputs)


def _conv_2d(node: ir.Node) -> bool:
    x, w = node.inputs[0], node.inputs[1]
    floating = x.dtype is not None and x.dtype.is_floating_point()
    return _rank(x) == 4 and _rank(w) == 4 and floating and w.dtype == x.dtype


def _window_2d(node: ir.Node) -> bool:
    return len(_attr(node, "kernel_shape", ())) == 2


def _input_4d(node: ir.Node) -> bool:
    return _rank(node.inputs[0]) == 4


def _ungrouped(node: ir.Node) -> bool:
    return int(_attr(node, "group", 1)) == 1


@dataclasses.dataclass(frozen=True)
class OpLayout:
    """How one op runs on channels-last data.

    :param variant: runs the backend's declared channels-last variant (False: the primitive itself,
        layout-agnostic).
    :param reads: which inputs must already be NHWC for it to run channels last: ``"first"``
        (input 0), ``"any"`` (one of them) or ``"none"`` (it starts an NHWC region: Conv).
    :param data: how many leading inputs are activations brought to NHWC when they are not yet
        (None: every input; lower-rank operands get leading unit dims first).
    :param writes_nhwc: whether its result is NHWC (False: it reads NHWC, writes the ONNX layout).
    :param when: the node's condition (ranks, attributes) beyond the common ones.
    :param weight: the input an ungrouped form ``"hwio"`` reads spatial-major.
    """

    variant: bool
    reads: str
    data: int | None = 0
    writes_nhwc: bool = True
    when: Callable[[ir.Node], bool] | None = None
    weight: int | None = None


#: elementwise ops of one tensor input (the rest scalars): they run on NHWC data unchanged
UNARY = frozenset({
    "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Celu", "Gelu", "HardSigmoid", "HardSwish",
    "Softplus", "Softsign", "Mish", "Swish", "ThresholdedRelu", "Shrink", "Clip", "Identity", "Abs",
    "Neg", "Exp", "Log", "Sqrt", "Erf", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Cast", "Dropout",
})
#: broadcasting elementwise ops: the other operands are brought to NHWC (cheap for constants)
BROADCAST = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean", "PRelu", "Pow"})

_POOL = OpLayout(variant=True, reads="first", when=_window_2d)
_GLOBAL = OpLayout(variant=True, reads="first")

#: op type (default domain) -> how it runs channels last; ops not listed always run NCHW
LAYOUTS: Mapping[str, OpLayout] = {
    **{op: OpLayout(variant=False, reads="first", when=_scalar_rest) for op in UNARY},
    **{op: OpLayout(variant=False, reads="any", data=None, when=_broadcast) for op in BROADCAST},
    "Conv": OpLayout(variant=True, reads="none", data=1, when=_conv_2d, weight=1),
    "Concat": OpLayout(variant=True, reads="any", data=None, when=_concat_channels),
    "BatchNormalization": OpLayout(variant=True, reads="first", when=lambda n: len(n.inputs) == 5),
    "MaxPool": _POOL,
    "AveragePool": _POOL,
    "GlobalAveragePool": _GLOBAL,
    "GlobalMaxPool": _GLOBAL,
    "LRN": _GLOBAL,
    "Transpose": OpLayout(variant=True, reads="first", writes_nhwc=False, when=_input_4d),
}


def passed_on(ctx: Any, x: Any, *rest: Any, **attrs: Any) -> Any:
    """The rest of a pattern computed by its first node: the value passes through."""
    return x


#: a node -> the channels-last variants its backend declared for its primitive, by form
Variants = Callable[[ir.Node], Mapping[str, Callable[..., Any]]]


def registered_variants(plan: ImportPlan) -> Variants:
    """The variants the import plan's backend registered for each node's primitive."""

    def lookup(node: ir.Node) -> Mapping[str, Callable[..., Any]]:
        return plan.registry.layout_variants(plan.backend, plan.info(node).primitive)

    return lookup


@dataclasses.dataclass
class LayoutPlan:
    """Where a graph runs channels last.

    ``fns``: nodes that run a channels-last variant (or :func:`passed_on`) instead of their
    primitive; ``convert``: per node, the conversion of each input (:data:`TO_LAST`,
    :data:`TO_FIRST` or None) before it runs; ``outputs``: the conversion of each graph output;
    ``hwio``: Conv weights (params or import-time constants) read spatial-major; ``nhwc``: the
    values held channels last.
    """

    fns: dict[ir.Node, Callable[..., Any]] = dataclasses.field(default_factory=dict)
    convert: dict[ir.Node, tuple[str | None, ...]] = dataclasses.field(default_factory=dict)
    outputs: list[str | None] = dataclasses.field(default_factory=list)
    hwio: set[ir.Value] = dataclasses.field(default_factory=set)
    nhwc: set[ir.Value] = dataclasses.field(default_factory=set)

    def apply(self, program: Any) -> bool:
        """Set the plan on a backend's compiled program: each step (``.node``) gets its ``fn`` and
        input ``convert``; the program its ``convert_out`` and ``hwio``. Whether anything runs NHWC."""
        for step in program.steps:
            step.fn = self.fns.get(step.node, step.fn)
            step.convert = self.convert.get(step.node)
        program.convert_out = list(self.outputs)
        program.hwio = set(self.hwio)
        return bool(self.nhwc)


def plan_program(import_plan: ImportPlan, program: Any, *, static: Mapping[ir.Value, Any] | None = None,
                 params: Container[ir.Value] = ()) -> LayoutPlan:
    """Plan a backend's compiled main graph (``program.steps``, each with its ``.node``, and
    ``program.outputs``) with the variants its backend registered, and set the plan on it."""
    lp = plan([s.node for s in program.steps], program.outputs, registered_variants(import_plan),
              static=static, params=params)
    lp.apply(program)
    return lp


def plan(nodes: Sequence[ir.Node], outputs: Sequence[ir.Value], variants: Variants, *,
         static: Mapping[ir.Value, Any] | None = None, params: Container[ir.Value] = ()) -> LayoutPlan:
    """Plan the main graph whose ``nodes`` (topological order) and ``outputs`` are given.

    ``variants(node)`` gives the channels-last variants declared for a node's primitive
    (:func:`registered_variants`); ``static`` (import-time constants) and ``params`` say which Conv
    weights may be read HWIO: a param, or a 4-D numpy constant, read by such Convs only.
    """
    lp = LayoutPlan()
    nhwc = lp.nhwc
    captured = _captured(nodes)
    done: set[ir.Node] = set()
    chosen: dict[ir.Node, OpLayout] = {}
    for node in nodes:
        if node in done:
            continue
        shuffle = _channel_shuffle(node, nhwc, captured, variants)
        if shuffle is not None:
            fn, groups, rest = shuffle
            lp.fns[node] = functools.partial(fn, groups=groups)
            for n in rest:
                lp.fns[n] = passed_on
                done.add(n)
            nhwc.update(v for n in (node, *rest) for v in n.outputs)
            continue
        rule = _rule(node, nhwc, captured)
        fn = variants(node).get("") if rule is not None and rule.variant else None
        if rule is not None and (fn is not None or not rule.variant):
            chosen[node] = rule
            if fn is not None:
                lp.fns[node] = fn
            if rule.writes_nhwc:
                lp.convert[node] = _input_conversions(node, rule, nhwc)
                nhwc.add(node.outputs[0])
        elif any(v in nhwc for v in node.inputs):
            lp.convert[node] = tuple(TO_FIRST if v in nhwc else None for v in node.inputs)
    lp.outputs = [TO_FIRST if v in nhwc else None for v in outputs]
    _plan_weights(lp, chosen, variants, static or {}, params)
    return lp


def _rule(node: ir.Node, nhwc: set[ir.Value], captured: set[ir.Value]) -> OpLayout | None:
    """The op's layout if ``node`` can run channels last given the NHWC values, else None."""
    rule = LAYOUTS.get(node.op_type)
    x = node.inputs[0] if node.inputs else None
    if rule is None or node.domain not in ("", "ai.onnx") or x is None:
        return None
    if any(v.uses() or v.is_graph_output() for v in node.outputs[1:]):
        return None  # only the first output is planned
    if rule.writes_nhwc and node.outputs[0] in captured:
        return None
    if rule.reads == "first" and x not in nhwc:
        return None
    if rule.reads == "any" and not any(v in nhwc for v in node.inputs):
        return None
    return rule if rule.when is None or rule.when(node) else None


def _input_conversions(node: ir.Node, rule: OpLayout, nhwc: set[ir.Value]) -> tuple[str | None, ...]:
    """For a node run channels last: which inputs must be brought to NHWC first."""
    data = len(node.inputs) if rule.data is None else rule.data
    return tuple(
        TO_LAST if i < data and v is not None and v not in nhwc and _rank(v) else None
        for i, v in enumerate(node.inputs)
    )


def _sole_reader(v: ir.Value, captured: set[ir.Value]) -> ir.Node | None:
    uses = list(v.uses())
    if len(uses) != 1 or v in captured or v.is_graph_output():
        return None
    return uses[0].node


def _static_dims(v: ir.Value) -> list[int | None]:
    return [d if isinstance(d, int) else None for d in (v.shape or [])]


def _channel_shuffle(node: ir.Node, nhwc: set[ir.Value], captured: set[ir.Value],
                     variants: Variants) -> tuple[Callable[..., Any], int, list[ir.Node]] | None:
    """``Reshape(x, [N, g, C/g, H, W]) -> Transpose(perm=[0, 2, 1, 3, 4]) -> Reshape(.., x's
    shape)`` on an NHWC ``x`` whose intermediates nobody else reads, when the Reshape declares a
    ``"shuffle"`` form: (that form, g, [Transpose, Reshape])."""
    if node.op_type != "Reshape" or node.domain not in ("", "ai.onnx") or node.inputs[0] not in nhwc:
        return None
    x, mid = node.inputs[0], node.outputs[0]
    shape, split = _static_dims(x), _static_dims(mid)
    if len(shape) != 4 or len(split) != 5 or None in shape or None in split:
        return None
    n, c, h, w = shape
    if split[0] != n or split[3:] != [h, w] or split[1] * split[2] != c:  # type: ignore[operator]
        return None
    t = _sole_reader(mid, captured)
    if t is None or t.op_type != "Transpose" or list(_attr(t, "perm", ())) != [0, 2, 1, 3, 4]:
        return None
    back = _sole_reader(t.outputs[0], captured)
    if back is None or back.op_type != "Reshape" or back.inputs[0] is not t.outputs[0]:
        return None
    out = back.outputs[0]
    if out.shape is None or _static_dims(out) != shape or out in captured:
        return None
    fn = variants(node).get("shuffle")
    return None if fn is None else (fn, int(split[1]), [t, back])  # type: ignore[arg-type]


def _captured(nodes: Sequence[ir.Node]) -> set[ir.Value]:
    """Values read inside subgraphs (their own and the enclosing graphs')."""
    out: set[ir.Value] = set()
    for node in nodes:
        for attr in node.attributes.values():
            graphs = ([attr.value] if attr.type == ir.AttributeType.GRAPH
                      else list(attr.value) if attr.type == ir.AttributeType.GRAPHS else [])
            for g in graphs:
                for inner in ir.traversal.RecursiveGraphIterator(g):
                    out.update(v for v in inner.inputs if v is not None)
    return out


def _plan_weights(lp: LayoutPlan, chosen: Mapping[ir.Node, OpLayout], variants: Variants,
                  static: Mapping[ir.Value, Any], params: Container[ir.Value]) -> None:
    """Ungrouped channels-last Convs whose weight is a param or an import-time constant read by
    such Convs only, and that declare the ``"hwio"`` form: they read the weight HWIO."""
    readers: dict[ir.Value, list[ir.Node]] = {}
    for node, rule in chosen.items():
        if rule.weight is not None and rule.variant and _ungrouped(node) and "hwio" in variants(node):
            readers.setdefault(node.inputs[rule.weight], []).append(node)
    for w, nodes in readers.items():
        if w is None or w.is_graph_input() or len(w.uses()) != len(nodes):
            continue
        if w not in params and not (isinstance(static.get(w), np.ndarray) and static[w].ndim == 4):
            continue
        lp.hwio.add(w)
        for node in nodes:
            lp.fns[node] = variants(node)["hwio"]
