"""What every framework entry point of the plugin registers: its primitives and expected failures.

Each framework has its own entry point (``ortcontrib_torch`` ...), so a user who installs only
``onnxport-torch`` beside this plugin gets the torch primitives and nothing imports JAX or
TensorFlow. An entry point registers only when its backend is installed (its hooks run after the
backends': ``trylast``), and lazily: the framework is imported when the backend is first used.
"""

from __future__ import annotations

from typing import Any

from .expected_failures import EXPECTED_FAILURES


def register(registrar: Any, backend: str) -> None:
    """Register the primitives of ``onnxport_ortcontrib.<backend>`` for ``backend``, if installed."""
    if backend not in registrar.backends:
        return
    registrar.discover(f"onnxport_ortcontrib.{backend}", backend=backend, lazy=True)
    failures = EXPECTED_FAILURES.get(backend) or {}
    if failures:
        registrar.add_expected_failures(backend, failures, source=f"onnxport_ortcontrib.expected_failures[{backend!r}]")
