"""The ortcontrib_tensorflow entry point: the contrib ops for the tensorflow backend."""

from __future__ import annotations

from onnxport import hookimpl

from .plugin import register


@hookimpl(trylast=True)
def onnxport_register(registrar) -> None:
    register(registrar, "tensorflow")
