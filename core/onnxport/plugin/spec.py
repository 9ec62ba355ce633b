"""Op specs read from ``onnx.defs``: never typed by hand."""

from __future__ import annotations

import dataclasses
import functools
import keyword
from typing import Any

import onnx
import onnx.defs
import onnx.helper

from ..errors import UnsupportedOpError

_OPTION = {
    onnx.defs.OpSchema.FormalParameterOption.Single: "single",
    onnx.defs.OpSchema.FormalParameterOption.Optional: "optional",
    onnx.defs.OpSchema.FormalParameterOption.Variadic: "variadic",
}


@dataclasses.dataclass(frozen=True)
class FormalParam:
    """One input or output of an op: its name, type string and arity option."""

    name: str
    type_str: str
    option: str  # "single" | "optional" | "variadic"
    min_arity: int = 1


@dataclasses.dataclass(frozen=True)
class AttrSpec:
    """One attribute of an op; ``default`` is the decoded Python value or None."""

    name: str
    type: str  # "INT", "FLOAT", "STRING", "INTS", "FLOATS", "STRINGS", "TENSOR", "GRAPH", ...
    required: bool
    default: Any = None

    @property
    def py_name(self) -> str:
        """The keyword-argument name a primitive receives this attribute under."""
        return py_name(self.name)


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """The schema of one op at one since_version."""

    domain: str
    op_type: str
    since_version: int
    inputs: tuple[FormalParam, ...]
    outputs: tuple[FormalParam, ...]
    attributes: dict[str, AttrSpec]
    type_constraints: dict[str, tuple[str, ...]]
    deprecated: bool = False
    has_function: bool = False

    def allowed_types(self, param: FormalParam) -> tuple[str, ...]:
        """The tensor type strings (``tensor(float)``...) a formal parameter accepts."""
        if param.type_str in self.type_constraints:
            return self.type_constraints[param.type_str]
        return (param.type_str,)


def py_name(attr_name: str) -> str:
    """Attribute name as a valid keyword argument (``lambda`` -> ``lambda_``)."""
    return attr_name + "_" if keyword.iskeyword(attr_name) else attr_name


def _decode_default(attr: onnx.defs.OpSchema.Attribute) -> Any:
    proto = attr.default_value
    if proto is None or not proto.name:
        return None
    value = onnx.helper.get_attribute_value(proto)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [v.decode() if isinstance(v, bytes) else v for v in value]
    return value


def _from_schema(schema: onnx.defs.OpSchema) -> OpSpec:
    def params(items) -> tuple[FormalParam, ...]:
        return tuple(
            FormalParam(p.name, p.type_str, _OPTION[p.option], getattr(p, "min_arity", 1))
            for p in items
        )

    attrs = {
        name: AttrSpec(name, a.type.name, bool(a.required), _decode_default(a))
        for name, a in schema.attributes.items()
    }
    tcs = {t.type_param_str: tuple(t.allowed_type_strs) for t in schema.type_constraints}
    return OpSpec(
        domain=schema.domain,
        op_type=schema.name,
        since_version=schema.since_version,
        inputs=params(schema.inputs),
        outputs=params(schema.outputs),
        attributes=attrs,
        type_constraints=tcs,
        deprecated=schema.deprecated,
        has_function=schema.has_function or schema.has_context_dependent_function,
    )


def normalize_domain(domain: str) -> str:
    """``ai.onnx`` and the empty string name the same default domain."""
    return "" if domain in ("", "ai.onnx") else domain


@functools.cache
def get_spec(op_type: str, opset: int, domain: str = "") -> OpSpec:
    """The spec of ``op_type`` as seen by a model importing ``domain`` at ``opset``."""
    domain = normalize_domain(domain)
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError as exc:
        raise UnsupportedOpError(
            f"ONNX has no op {op_type!r} in domain {domain or 'ai.onnx'!r} at opset {opset}"
        ) from exc
    return _from_schema(schema)


def has_spec(op_type: str, opset: int, domain: str = "") -> bool:
    """Whether ``onnx.defs`` knows ``op_type`` at ``opset``."""
    return onnx.defs.has(op_type, opset, normalize_domain(domain)) if opset else False


@functools.cache
def _version_index() -> dict[tuple[str, str], tuple[int, ...]]:
    """(domain, op_type) -> every since_version, oldest first: one pass over ``onnx.defs``
    (reading every schema costs tens of milliseconds; it is done once per process)."""
    found: dict[tuple[str, str], set[int]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        found.setdefault((s.domain, s.name), set()).add(s.since_version)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def versions(op_type: str, domain: str = "") -> tuple[int, ...]:
    """Every since_version of an op, oldest first."""
    return _version_index().get((normalize_domain(domain), op_type), ())


def latest_version(op_type: str, domain: str = "") -> int:
    """The newest since_version of an op: its canonical form."""
    found = versions(op_type, domain)
    if not found:
        raise UnsupportedOpError(f"ONNX has no op {op_type!r} in domain {domain or 'ai.onnx'!r}")
    return found[-1]


def latest_opset(domain: str = "") -> int:
    """The newest opset version onnx.defs knows for a domain."""
    domain = normalize_domain(domain)
    if domain == "":
        return onnx.defs.onnx_opset_version()
    return max((v[-1] for (d, _), v in _version_index().items() if d == domain), default=1)


@functools.cache
def all_ops(domain: str = "", opset: int | None = None) -> tuple[str, ...]:
    """Names of every (non-deprecated) op of a domain that exists at ``opset`` (default newest)."""
    domain = normalize_domain(domain)
    opset = opset or latest_opset(domain)
    names = set()
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == domain and s.since_version <= opset:
            names.add(s.name)
    return tuple(sorted(n for n in names if not get_spec(n, opset, domain).deprecated))
