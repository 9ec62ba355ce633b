"""The JAX backend's pluggy hooks."""

from __future__ import annotations

from onnxport import hookimpl


@hookimpl
def onnxport_register(registrar) -> None:
    # by reference: the framework and the primitives are imported when the backend is first used
    registrar.add_backend("jax", "onnxport_jax.importer:JaxBackend")
    registrar.discover("onnxport_jax.ops", backend="jax", lazy=True)


@hookimpl
def onnxport_backend_for(obj) -> str | None:
    """JAX exports Flax NNX modules, imported JaxModels and (as example inputs of a plain
    function) JAX arrays."""
    import sys

    jax = sys.modules.get("jax")
    if jax is not None and isinstance(obj, jax.Array):
        return "jax"
    nnx = sys.modules.get("flax.nnx")
    if nnx is not None and isinstance(obj, nnx.Module):
        return "jax"
    importer = sys.modules.get("onnxport_jax.importer")
    if importer is not None and isinstance(obj, importer.JaxModel):
        return "jax"
    return None
