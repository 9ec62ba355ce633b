"""Running one generated case: import, run, compare; expected failures from the backend's list."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

from .cases import NodeCase
from .compare import compare_outputs


def backend_object(name: str) -> Any:
    import onnxport

    return onnxport.get_backend(name)


def expected_failure(backend: Any, case: NodeCase) -> str | None:
    """The reviewed reason this case is expected to fail in ``backend``, if listed."""
    table: dict[str, str] = getattr(backend, "expected_failures", {}) or {}
    if case.name in table:
        return table[case.name]
    for _, op in case.ops:
        if f"op:{op}" in table:
            return table[f"op:{op}"]
    return None


def missing_ops(backend_name: str, case: NodeCase) -> list[str]:
    import onnxport
    from onnxport.spec import latest_version

    reg = onnxport.registry()
    out = []
    for domain, op in case.ops:
        try:
            version = latest_version(op, domain)
        except Exception:  # noqa: BLE001 - an op onnx.defs does not know
            version = 10**6
        if reg.find_import(backend_name, domain, op, version) is None:
            out.append(op)
    return sorted(set(out))


def run_backend(backend_name: str, model: onnx.ModelProto, inputs: list[Any]) -> list[Any]:
    import onnxport

    backend = backend_object(backend_name)
    imported = onnxport.import_model(model, backend=backend_name)
    return backend.run(imported, inputs)


def _check(backend_name: str, case: NodeCase, fn) -> None:
    backend = backend_object(backend_name)
    reason = expected_failure(backend, case)
    missing = missing_ops(backend_name, case)
    if missing and reason is None:
        pytest.skip(f"not registered in {backend_name}: {', '.join(missing)}")
    try:
        fn()
    except Exception as exc:
        if reason is not None:
            pytest.xfail(reason)
        raise AssertionError(f"{case.name}: {type(exc).__name__}: {exc}") from exc
    if reason is not None:
        pytest.fail(f"{case.name} passes but is listed as an expected failure ({reason!r}): remove it from the list")


def run_node_case(backend_name: str, case: NodeCase) -> None:
    """The official case: expected outputs come with the case."""

    def go() -> None:
        inputs, expected = case.data()
        actual = run_backend(backend_name, case.model, inputs)
        outputs = [o.name for o in case.model.graph.output]
        assert len(actual) == len(expected), f"{len(actual)} outputs, expected {len(expected)}"
        for name, e, a in zip(outputs, expected, actual):
            compare_outputs(e, a, name=name)

    _check(backend_name, case, go)


# -- random-input variants ---------------------------------------------------------------------
_FLOAT = onnx.TensorProto.FLOAT


def random_variants(case: NodeCase) -> list[str]:
    """Which random variants a case gets: single-node cases whose inputs are all float32."""
    if len(case.ops) != 1 or case.name.endswith("_expanded") or "_expanded_" in case.name:
        return []
    model = case.model
    if len(model.graph.node) != 1 or not model.graph.input:
        return []
    for vi in list(model.graph.input) + list(model.graph.output):
        t = vi.type
        if not t.HasField("tensor_type") or t.tensor_type.elem_type != _FLOAT:
            return []
    variants = ["random"]
    import onnxport.spec as spec

    node = model.graph.node[0]
    try:
        s = spec.get_spec(node.op_type, case.opset, node.domain)
    except Exception:  # noqa: BLE001
        return variants
    types = {tc for p in s.inputs for tc in s.allowed_types(p)}
    if "tensor(double)" in types and not any(a.type == onnx.AttributeProto.TENSOR for a in node.attribute):
        variants.append("float64")
    return variants


def _variant_model(case: NodeCase, variant: str) -> tuple[onnx.ModelProto, list[Any]]:
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, _ = case.data()
    rng = np.random.default_rng(abs(hash(case.name)) % (2**32))
    dtype = np.float64 if variant == "float64" else np.float32
    new_inputs = []
    for x in inputs:
        arr = np.asarray(x)
        new_inputs.append(rng.standard_normal(arr.shape).astype(dtype))
    if variant == "float64":
        for vi in list(model.graph.input) + list(model.graph.output):
            vi.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    return model, new_inputs


def run_random_case(backend_name: str, case: NodeCase, variant: str) -> None:
    """Random inputs drawn for the case's shapes (float64 where the spec allows), vs onnxruntime."""
    from .reference import ReferenceUnavailable, run_reference

    model, inputs = _variant_model(case, variant)
    try:
        with np.errstate(all="ignore"):
            expected, _ = run_reference(model, inputs)
    except ReferenceUnavailable as exc:
        pytest.skip(f"no reference runtime runs this variant: {str(exc)[:200]}")

    def go() -> None:
        actual = run_backend(backend_name, model, inputs)
        outputs = [o.name for o in model.graph.output]
        for name, e, a in zip(outputs, expected, actual):
            compare_outputs(e, a, name=name)

    _check(backend_name, case, go)
