"""Native torch files for ``onnxport convert``: ``.pt2`` (a ``torch.export`` program) and ``.pt``.

A ``.pt`` file is a ``torch.save``'d dict ``{"state_dict": ..., "program": bytes}``: the weights
by name and the model as a serialized ``torch.export`` program (no onnxport needed to run it).
Reload the model with::

    saved = torch.load("model.pt")                       # weights_only loading suffices
    module = torch.export.load(io.BytesIO(saved["program"])).module()

or load ``saved["state_dict"]`` into the module ``onnxport.import_model`` builds from the ONNX file.
"""

from __future__ import annotations

import io
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
        buf = io.BytesIO()
        torch.export.save(program, buf)
        torch.save({"state_dict": module.state_dict(), "program": buf.getvalue()}, path)


def load(path: str | Path) -> tuple[Any, tuple[Any, ...]]:
    """A ``.pt2`` program as a callable module and the example inputs it was exported with."""
    path = Path(path)
    if path.suffix == ".pt":
        saved = torch.load(path)
        return torch.export.load(io.BytesIO(saved["program"])).module(), ()
    if path.suffix != ".pt2":
        raise InputError(f"the torch backend reads .pt2 programs, not {path.name!r}")
    program = torch.export.load(path)
    args = program.example_inputs[0] if program.example_inputs else ()
    return program.module(), tuple(args)
