"""The JAX backend's pluggy hooks."""

from __future__ import annotations

from onnxport import hookimpl


@hookimpl
def onnxport_register(registrar) -> None:
    from .importer import JaxBackend

    registrar.add_backend(JaxBackend())
    registrar.discover("onnxport_jax.ops", backend="jax")
