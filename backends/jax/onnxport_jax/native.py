"""Native JAX files for ``onnxport convert``: a folder with ``params.npz`` (the trainable
parameters and the non-trainable state, such as running statistics, by name) and ``model.onnx``
(the graph); :func:`load` imports the graph with ``onnxport.import_model(..., backend="jax")``
and sets the saved parameters and state. (Orbax checkpoints are not written: ``.npz`` needs
nothing beyond numpy.)"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

from onnxport.errors import InputError

PARAMS, GRAPH = "params.npz", "model.onnx"


def can_load(path: str | Path) -> bool:
    """Whether ``path`` is a folder :func:`save` wrote."""
    p = Path(path)
    return p.is_dir() and (p / PARAMS).is_file() and (p / GRAPH).is_file()


def save(model: Any, path: str | Path, example_inputs: Sequence[Any] = ()) -> None:
    """Write an imported ``JaxModel`` (or any model the JAX exporter takes) to the folder ``path``."""
    import onnxport

    from .exporter import export_model

    p = Path(path)
    if p.suffix:
        raise InputError(f"the jax backend writes a folder (params.npz + model.onnx), not {p.name!r}")
    p.mkdir(parents=True, exist_ok=True)
    graph = export_model(model, tuple(example_inputs))
    onnxport.save(graph, p / GRAPH)
    # every float initializer of the written graph is a parameter or state when it is read back
    # (an imported model's arrays that are no params, such as folded weight generators, too)
    params = {v.name: v.const_value.numpy() for v in graph.graph.initializers.values()
              if v.const_value is not None and v.const_value.dtype.is_floating_point()}
    if getattr(model, "params", None) is not None:
        params.update({**getattr(model, "state", {}), **model.params})
    np.savez(p / PARAMS, **{k: np.asarray(v) for k, v in params.items()})


def load(path: str | Path) -> tuple[Any, tuple[Any, ...]]:
    """The ``JaxModel`` a folder holds (its params from ``params.npz``) and random example inputs."""
    import onnxport
    from onnxport.tools.check import random_inputs

    p = Path(path)
    if not can_load(p):
        raise InputError(f"{p} is no onnxport JAX folder (params.npz + model.onnx)")
    model = onnxport.import_model(str(p / GRAPH), backend="jax")
    with np.load(p / PARAMS) as saved:
        missing = sorted((set(model.params) | set(model.state)) - set(saved.files))
        if missing:
            raise InputError(f"{p / PARAMS} lacks parameters {missing[:5]}")
        model.params = {k: jnp.asarray(saved[k]) for k in model.params}
        model.state = {k: jnp.asarray(saved[k]) for k in model.state}
    graph = onnxport.load(str(p / GRAPH))
    return model, tuple(jnp.asarray(a) for a in random_inputs(graph))


