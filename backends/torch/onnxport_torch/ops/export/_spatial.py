"""Per-spatial-dim settings shared by the convolution and pooling primitives."""

from __future__ import annotations

from typing import Any


def per_dim(g: Any, op: str, name: str, values: Any, nd: int, default: Any = None) -> list[int]:
    """A per-spatial-dim int list of an ``op`` setting: one entry applies to every dim, an empty one
    is ``default`` (where given); static ints only."""
    values = [values] if isinstance(values, int) else list(values)
    if not values and default is not None:
        return list(default)
    if not all(isinstance(v, int) for v in values):
        raise g.error(f"a symbolic {op} {name} ({values}) is not supported")
    if len(values) == 1:
        values = values * nd
    if len(values) != nd:
        raise g.error(f"{op} {name} {values} does not match {nd} spatial dims")
    return values
