"""Call-time input checks every backend shares: binding by position or name, static shapes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import onnx_ir as ir

from ..errors import InputError


def bind_inputs(names: Sequence[str], args: Sequence[Any], kwargs: Mapping[str, Any],
                aliases: Mapping[str, int] | None = None) -> list[Any]:
    """The graph inputs in graph order from positional and keyword arguments.

    ``aliases`` maps extra keyword names (e.g. sanitized argument names) to input positions.
    Raises :class:`InputError` for too many, unknown, repeated or missing inputs.
    """
    if len(args) > len(names):
        raise InputError(f"the model takes {len(names)} input(s) {list(names)}, got {len(args) + len(kwargs)}")
    values = list(args) + [None] * (len(names) - len(args))
    given = [i < len(args) for i in range(len(names))]
    by_name = dict(aliases or {})
    by_name.update({n: i for i, n in enumerate(names)})  # a real input name wins over an alias
    for key, v in kwargs.items():
        if key not in by_name:
            raise InputError(f"unknown input {key!r}; the model's inputs are {list(names)}")
        i = by_name[key]
        if given[i]:
            raise InputError(f"input {names[i]!r} given twice")
        values[i], given[i] = v, True
    missing = [n for n, g in zip(names, given) if not g]
    if missing:
        raise InputError(f"missing input(s) {missing}; the model takes {list(names)}")
    return values


def check_shape(name: str, want: Sequence[int | str | None], actual: Sequence[int],
                symbols: dict[str, int] | None = None) -> None:
    """Raise :class:`InputError` when ``actual`` breaks the graph's static shape of input ``name``.

    Int dims must match; with ``symbols``, a named dim must take the same size in every input.
    """
    actual = list(actual)
    if len(actual) != len(want):
        raise InputError(f"input {name!r} must have rank {len(want)} (shape {list(want)}), got shape {actual}")
    for axis, (d, size) in enumerate(zip(want, actual)):
        if isinstance(d, int) and d != size:
            raise InputError(f"input {name!r} dimension {axis} must be {d}, got {size} (shape {actual})")
        if symbols is not None and isinstance(d, str) and d and symbols.setdefault(d, size) != size:
            raise InputError(
                f"input {name!r} dimension {axis} ({d!r}) is {size}, but another input has {d!r} = {symbols[d]}"
            )


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """What an imported model knows about one graph input, for call-time checks.

    ``kind`` is ``"tensor"`` or ``"other"`` (sequence, optional); ``dtype`` the ONNX element
    type; ``shape`` ints, symbolic dim names and None (unknown), or None when the rank is unknown.
    """

    name: str
    kind: str
    dtype: ir.DataType | None
    shape: tuple[int | str | None, ...] | None

    @property
    def is_tensor(self) -> bool:
        return self.kind == "tensor"


def input_spec(v: ir.Value) -> InputSpec:
    """The :class:`InputSpec` of a graph input."""
    kind = "other" if v.type is not None and not isinstance(v.type, ir.TensorType) else "tensor"
    dtype = v.dtype if kind == "tensor" else None
    shape = None
    if kind == "tensor" and v.shape is not None:
        shape = tuple(d if isinstance(d, int) else (getattr(d, "value", None) or None) for d in v.shape)
    return InputSpec(v.name or "", kind, dtype, shape)


class CallCheck:
    """The shape checks of one call: static dims match, and a symbolic dim takes the same size
    in every input that has it (:func:`check_shape` with shared symbols)."""

    def __init__(self) -> None:
        self.symbols: dict[str, int] = {}

    def shape(self, spec: InputSpec, actual: Sequence[int]) -> None:
        if spec.shape is not None:
            check_shape(spec.name, spec.shape, actual, self.symbols)
