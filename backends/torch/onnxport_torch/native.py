"""Native torch files for ``onnxport convert``: ``.pt2`` (a ``torch.export`` program) and ``.pt``.

A ``.pt`` file holds ``{"state_dict": ..., "model": graph_module}`` written with ``torch.save``:
the model is the ``torch.export`` program's ``torch.fx.GraphModule`` (no onnxport needed to run
it); reload it with ``torch.load(path, weights_only=False)["model"]`` (only from trusted files:
it unpickles code), or load ``["state_dict"]`` into the module imported from the ONNX file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from onnxport.errors import ConversionError, InputError

SUFFIXES = (".pt2", ".pt")


def can_load(path: str | Path) -> bool:
    """Whether ``path`` is a torch file this backend reads (``.pt2``)."""
    return Path(path).suffix == ".pt2" and Path(path).is_file()


def save(module: Any, path: str | Path, example_inputs: Sequence[Any] = ()) -> None:
    """Write ``module`` to ``path``: ``.pt2`` exports it with ``torch.export`` on ``example_inputs``."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise InputError(f"the torch backend writes .pt2 or .pt files, not {path.name!r}")
    args = tuple(torch.as_tensor(x) for x in example_inputs)
    try:
        program = torch.export.export(module, args, strict=False)
    except Exception as exc:
        raise ConversionError(f"torch.export could not trace the module: {type(exc).__name__}: {exc}") from exc
    if path.suffix == ".pt2":
        torch.export.save(program, path)
    else:
        torch.save({"state_dict": module.state_dict(), "model": program.module()}, path)


def load(path: str | Path) -> tuple[Any, tuple[Any, ...]]:
    """A ``.pt2`` program as a callable module and the example inputs it was exported with."""
    path = Path(path)
    if path.suffix == ".pt":
        return torch.load(path, weights_only=False)["model"], ()
    if path.suffix != ".pt2":
        raise InputError(f"the torch backend reads .pt2 programs, not {path.name!r}")
    program = torch.export.load(path)
    args = program.example_inputs[0] if program.example_inputs else ()
    return program.module(), tuple(args)
