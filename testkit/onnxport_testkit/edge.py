"""Edge-value variants of the node cases: NaN and infinities, zeros, an empty dimension, negative axes.

The random variants draw standard normals and small non-zero integers only; these variants put
the values an implementation most often gets wrong into the same one-node float32 cases and
compare with onnxruntime (NaN positions must match; NaN equals NaN). Which variants an op gets is
declared in :data:`EDGE_OPS`, and each is checked against the op's spec where the spec says
something: ``negaxis`` only where the schema's axis attribute admits negative values, ``empty``
only where every data input shares dim 0 (the op maps rows to rows). A variant that is known to
fail in a backend is listed in :data:`EDGE_FAILURES` with how it fails (``[mismatch]`` or
``[ExceptionClassName]``) and why; any other failure fails the run, and a listed one that passes too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from .cases import NodeCase
from .failures import expected_failure, failure_key
from .variants import _index_inputs, is_plain_case, random_variants, seed

NONFINITE, ZEROS, EMPTY, NEGAXIS = "nonfinite", "zeros", "empty", "negaxis"
_UNARY = (NONFINITE, ZEROS, EMPTY)
_BINARY = (NONFINITE, ZEROS, EMPTY)
_AXIS = (NONFINITE, ZEROS, NEGAXIS)

#: op -> the edge variants it gets (each also filtered by :func:`applies`)
EDGE_OPS: dict[str, tuple[str, ...]] = {
    **{op: _UNARY for op in ("Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Floor", "Ceil",
                             "Round", "Sign", "Reciprocal", "Erf", "Softplus", "Softsign", "Elu", "LeakyRelu",
                             "HardSigmoid", "Selu", "Celu", "Gelu", "Mish", "HardSwish", "Sin", "Cos", "Atan",
                             "IsNaN", "IsInf", "Identity")},
    **{op: _BINARY for op in ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "PRelu",
                              "Greater", "Less", "Equal")},
    **{op: _AXIS for op in ("Softmax", "LogSoftmax", "Hardmax", "ArgMax", "ArgMin", "ReduceSum", "ReduceMean",
                            "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp",
                            "ReduceSumSquare", "Concat", "Flatten", "Gather", "Split", "CumSum",
                            "LpNormalization", "LayerNormalization")},
}
#: node cases per (op, variant): the first cases of each op in name order
CASES_PER_OP = 2

#: backend -> ``{"<case>[<variant>]": "[how] why"}``: edge variants known to fail, with
#: reasons that hold on every machine (a meta-test refuses CPU features and "measured on" conditions)
EDGE_FAILURES: dict[str, dict[str, str]] = {
    "torch": {},
    "jax": {},
    "tensorflow": {},
}


def _negative_axis_allowed(case: NodeCase) -> bool:
    node = case.model.graph.node[0]
    try:
        schema = onnx.defs.get_schema(node.op_type, case.opset, node.domain)
    except onnx.defs.SchemaError:  # no schema: nothing to go by
        return False
    for name in ("axis", "axes"):
        attr = schema.attributes.get(name)
        if attr is not None and "negative" in attr.description.lower():
            return True
    return False


def _axis_attr(case: NodeCase) -> onnx.AttributeProto | None:
    for a in case.model.graph.node[0].attribute:
        if a.name == "axis" and a.type == onnx.AttributeProto.INT and a.i >= 0:
            return a
        if a.name == "axes" and a.type == onnx.AttributeProto.INTS and a.ints and min(a.ints) >= 0:
            return a
    return None


def _data_positions(case: NodeCase) -> list[int]:
    inputs, _ = case.data()
    keep = _index_inputs(case)
    return [i for i, x in enumerate(inputs) if np.asarray(x).size > 1 and i not in keep]


def applies(case: NodeCase, variant: str) -> bool:
    """Whether ``variant`` applies to the case by its spec and shapes."""
    inputs, _ = case.data()
    data = _data_positions(case)
    if not data:
        return False
    if variant in (NONFINITE, ZEROS):
        return True
    if variant == EMPTY:
        dims = {np.asarray(inputs[i]).shape[:1] for i in range(len(inputs))}
        return len(dims) == 1 and all(np.asarray(x).ndim >= 1 for x in inputs)
    if variant == NEGAXIS:
        return _axis_attr(case) is not None and _negative_axis_allowed(case)
    raise ValueError(f"unknown edge variant {variant!r}")


def edge_variants(case: NodeCase, cases_of_op: list[NodeCase] | None = None) -> list[str]:
    """The edge variants of a one-node float32 case whose op :data:`EDGE_OPS` declares."""
    if not is_plain_case(case) or "random" not in random_variants(case):
        return []
    op = case.ops[0][1]
    if cases_of_op is not None and case.name not in [c.name for c in cases_of_op[:CASES_PER_OP]]:
        return []
    return [v for v in EDGE_OPS.get(op, ()) if applies(case, v)]


def edge_model(case: NodeCase, variant: str) -> tuple[onnx.ModelProto, list[Any]]:
    """The case's model and inputs for ``variant``."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, _ = case.data()
    inputs = [np.array(x, copy=True) for x in inputs]
    rng = np.random.default_rng(seed(case.name, variant))
    data = _data_positions(case)
    if variant == NONFINITE:
        for i in data:
            x = rng.standard_normal(inputs[i].shape).astype(np.float32)
            flat = x.reshape(-1)
            special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
            at = rng.choice(flat.size, size=min(flat.size, len(special)), replace=False)
            flat[at] = special[: len(at)]
            inputs[i] = x
    elif variant == ZEROS:
        for i in data:
            inputs[i] = np.zeros_like(inputs[i])
    elif variant == EMPTY:
        inputs = [x[:0] for x in inputs]
        for vi in list(model.graph.input) + list(model.graph.output):
            vi.type.tensor_type.ClearField("shape")
    elif variant == NEGAXIS:
        rank = np.asarray(inputs[0]).ndim
        attr = next(a for a in model.graph.node[0].attribute if a.name == _axis_attr(case).name)
        if attr.type == onnx.AttributeProto.INT:
            attr.i = attr.i - rank
        else:
            attr.ints[:] = [a - rank for a in attr.ints]
    else:
        raise ValueError(f"unknown edge variant {variant!r}")
    return model, inputs


def expected_edge_failure(backend: Any, case: NodeCase, variant: str) -> str | None:
    """The listed reason this edge variant fails: :data:`EDGE_FAILURES`, or the backend's own list
    for the whole case (a case listed as failing fails in its edge variants as well)."""
    own = EDGE_FAILURES.get(backend.name, {}).get(failure_key(case.name, variant))
    return own if own is not None else expected_failure(backend, case.name, None)
