"""Variants derived from the node cases: random inputs per allowed dtype, dynamic batch, older opsets.

Every variant is a pure function of a :class:`~onnxport_testkit.cases.NodeCase`, so test ids are
stable and the same variant is generated in every pytest-xdist worker.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import onnx

from onnxport.plugin.testkit_support import testkit_part

from .cases import NodeCase

#: dtype variants drawn from the op spec's type constraints, beside the plain float32 "random"
DTYPE_VARIANTS: dict[str, tuple[int, str]] = {
    "random": (onnx.TensorProto.FLOAT, "tensor(float)"),
    "float64": (onnx.TensorProto.DOUBLE, "tensor(double)"),
    "float16": (onnx.TensorProto.FLOAT16, "tensor(float16)"),
    "int32": (onnx.TensorProto.INT32, "tensor(int32)"),
    "int64": (onnx.TensorProto.INT64, "tensor(int64)"),
}
#: the oldest opset the older-opset variants go down to (DESIGN: models from opset 7 load)
OLDEST_OPSET = 7
#: node cases per (op, older version) that get an older-opset variant
OPSET_CASES_PER_VERSION = 2
#: node cases per (ops, variant) that get one of a backend's own variants (its case_variants)
BACKEND_VARIANT_CASES_PER_OP = 1


def seed(*parts: str) -> int:
    """A seed that is the same in every process (``hash()`` of a str is salted)."""
    return zlib.crc32("/".join(parts).encode())


def is_plain_case(case: NodeCase) -> bool:
    """A single-node, default-domain case that is not a function expansion."""
    return (
        len(case.ops) == 1
        and not case.ops[0][0]
        and "_expanded" not in case.name
        and case.opset >= 1
    )


def case_version(case: NodeCase, op: str, domain: str = "") -> int | None:
    """The since_version of ``op`` as a model at the case's opset sees it."""
    from onnxport.plugin import spec

    if domain or not spec.has_spec(op, case.opset, domain):
        return None
    return spec.get_spec(op, case.opset, domain).since_version


def _formal_types(case: NodeCase) -> list[tuple[str, ...]] | None:
    """The allowed type strings of every input then output of the case's node, or None."""
    from onnxport.plugin import spec

    node = case.model.graph.node[0]
    try:
        s = spec.get_spec(node.op_type, case.opset, node.domain)
    except Exception:  # noqa: BLE001 - an op onnx.defs does not know
        return None
    out = []
    for params, names in ((s.inputs, node.input), (s.outputs, node.output)):
        for i, name in enumerate(names):
            if not name:
                continue
            p = params[min(i, len(params) - 1)]
            out.append(s.allowed_types(p))
    return out


def random_variants(case: NodeCase) -> list[str]:
    """Dtype variants for a one-node case whose graph inputs and outputs are all float32.

    Each variant retypes every input and output, so it is generated only where every formal
    parameter of the node accepts that type, and the node has no tensor attribute (its type
    would not follow).
    """
    if not is_plain_case(case):
        return []
    model = case.model
    if len(model.graph.node) != 1 or not model.graph.input:
        return []
    for vi in list(model.graph.input) + list(model.graph.output):
        t = vi.type
        if not t.HasField("tensor_type") or t.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            return []
    node = model.graph.node[0]
    if len(node.input) != len(model.graph.input) or len(node.output) != len(model.graph.output):
        return []  # some formal parameters are not graph values: keep to the plain variant
    formal = _formal_types(case)
    variants = ["random"]
    if formal is None:
        return variants
    has_tensor_attr = any(a.type == onnx.AttributeProto.TENSOR for a in node.attribute)
    for name, (_, type_str) in DTYPE_VARIANTS.items():
        if name == "random" or has_tensor_attr:
            continue
        if all(type_str in allowed for allowed in formal):
            variants.append(name)
    return variants


def _draw(rng: np.random.Generator, shape: tuple[int, ...], elem_type: int) -> np.ndarray:
    if elem_type in (onnx.TensorProto.INT32, onnx.TensorProto.INT64):
        # non-zero integers: integer division by zero aborts some runtimes
        mag = rng.integers(1, 6, size=shape)
        sign = np.where(rng.random(shape) < 0.5, -1, 1)
        return np.asarray(mag * sign).astype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))  # 0-d stays an array
    return rng.standard_normal(shape).astype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))


def _index_inputs(case: NodeCase) -> set[int]:
    """Positions of the case's inputs whose formal parameter is an index tensor."""
    import onnxport.plugin.spec as spec

    node = case.model.graph.node[0]
    try:
        s = spec.get_spec(node.op_type, case.opset, node.domain)
    except Exception:  # noqa: BLE001 - no spec: treat every input as data
        return set()
    names = [p.name for p in s.inputs]
    return {i for i, n in enumerate(names) if "indices" in n.lower() and i < len(node.input)}


def random_model(case: NodeCase, variant: str) -> tuple[onnx.ModelProto, list[Any]]:
    """The case's model retyped for ``variant`` and random inputs of the case's shapes."""
    elem_type, _ = DTYPE_VARIANTS[variant]
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, _ = case.data()
    rng = np.random.default_rng(seed(case.name, variant))
    np_type = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    # one-element inputs are settings (OneHot depth, Clip bounds, TopK k) and index inputs address
    # the data (OneHot indices): both keep the case's values; data inputs are drawn at random
    keep = _index_inputs(case)
    new_inputs = [_draw(rng, np.asarray(x).shape, elem_type) if np.asarray(x).size > 1 and i not in keep
                  else np.asarray(x).astype(np_type) for i, x in enumerate(inputs)]
    for vi in list(model.graph.input) + list(model.graph.output):
        vi.type.tensor_type.elem_type = elem_type
    return model, new_inputs


# -- dynamic batch ---------------------------------------------------------------------------
def has_dynamic_batch(case: NodeCase) -> bool:
    """Whether a dynamic-batch variant applies: a plain case whose first input is a tensor of rank >= 1."""
    if not is_plain_case(case) or not case.model.graph.input:
        return False
    t = case.model.graph.input[0].type
    return t.HasField("tensor_type") and len(t.tensor_type.shape.dim) >= 1


def dynamic_batch_model(case: NodeCase) -> onnx.ModelProto:
    """The case's model with dim 0 of its first input symbolic and output shapes unknown.

    The data stay the same: the variant checks that a primitive does not depend on a static
    batch size known at import time.
    """
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    dim = model.graph.input[0].type.tensor_type.shape.dim[0]
    dim.Clear()
    dim.dim_param = "batch"
    for out in model.graph.output:
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    return model


# -- older opsets ------------------------------------------------------------------------------
def older_opsets(case: NodeCase) -> list[int]:
    """Opsets below the case's at which its op has another schema version (>= OLDEST_OPSET).

    Each returned opset is the first at which that older schema version is in force (or
    OLDEST_OPSET for the version that is in force there).
    """
    from onnxport.plugin import spec

    if not is_plain_case(case):
        return []
    op = case.ops[0][1]
    current = case_version(case, op)
    if current is None:
        return []
    found: dict[int, int] = {}
    for opset in range(OLDEST_OPSET, case.opset):
        if not spec.has_spec(op, opset):
            continue
        s = spec.get_spec(op, opset)
        if s.deprecated or s.since_version == current:
            continue
        found.setdefault(s.since_version, opset)
    return sorted(found.values())


def opset_variants(cases: tuple[NodeCase, ...] | list[NodeCase]) -> list[tuple[NodeCase, int]]:
    """(case, older opset) pairs, at most OPSET_CASES_PER_VERSION cases per (op, version)."""
    from onnxport.plugin import spec

    taken: dict[tuple[str, int], int] = {}
    out = []
    for case in cases:
        for opset in older_opsets(case):
            op = case.ops[0][1]
            key = (op, spec.get_spec(op, opset).since_version)
            if taken.get(key, 0) >= OPSET_CASES_PER_VERSION:
                continue
            taken[key] = taken.get(key, 0) + 1
            out.append((case, opset))
    return out


class ConversionUnavailable(Exception):
    """onnx's version converter cannot bring this case down to the requested opset."""


def older_opset_model(case: NodeCase, opset: int) -> onnx.ModelProto:
    """The case's model converted down to ``opset`` by onnx's version converter."""
    from onnx import version_converter

    try:
        converted = version_converter.convert_version(case.model, opset)
        onnx.checker.check_model(converted)
    except Exception as exc:  # noqa: BLE001 - the converter lacks many down-adapters
        raise ConversionUnavailable(f"onnx.version_converter cannot convert to opset {opset}: {exc}") from exc
    if next((o.version for o in converted.opset_import if o.domain in ("", "ai.onnx")), 0) != opset:
        raise ConversionUnavailable(f"onnx.version_converter did not reach opset {opset}")
    return converted


# -- a backend's own variants --------------------------------------------------------------------
def backend_variants(backend: Any, cases: tuple[NodeCase, ...] | list[NodeCase]) -> list[tuple[NodeCase, str]]:
    """(case, variant) pairs of ``backend.case_variants``, the first
    :data:`BACKEND_VARIANT_CASES_PER_OP` cases per (ops, variant) in case order (stable)."""
    taken: dict[tuple[Any, str], int] = {}
    out = []
    for c in cases:
        for v in testkit_part(backend).case_variants(c.model):
            key = (c.ops, v)
            if taken.get(key, 0) < BACKEND_VARIANT_CASES_PER_OP:
                taken[key] = taken.get(key, 0) + 1
                out.append((c, v))
    return out
