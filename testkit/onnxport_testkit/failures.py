"""A backend's reviewed expected failures: the exact keys of cases and variants, and their lookup."""

from __future__ import annotations

from typing import Any


def failure_key(case: str, variant: str | None = None) -> str:
    """The exact key of a case (or one variant of it) in a backend's expected-failure list.

    ``test_abs`` covers every variant of that node case; ``test_abs[float16]`` one variant;
    ``export:aten.relu.default[0]`` one export sample, ``export:aten.relu.default`` all of them.
    """
    return f"{case}[{variant}]" if variant else case


def failure_table(backend: Any) -> dict[str, str]:
    """A backend's reviewed expected failures, with those plugins declared for it (exact key -> reason)."""
    import onnxport

    table: dict[str, str] = dict(backend.expected_failures)
    table.update({k: reason for k, (reason, _) in onnxport.registry().expected_failures(backend.name).items()})
    return table


def expected_failure(backend: Any, case: str, variant: str | None = None) -> str | None:
    """The reviewed reason this case (or variant) is expected to fail in ``backend``, if listed."""
    table = failure_table(backend)
    if variant and failure_key(case, variant) in table:
        return table[failure_key(case, variant)]
    return table.get(case)
