"""Native TensorFlow files for ``onnxport convert``: a SavedModel folder (written and read) and
``.keras`` files (read)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from onnxport.errors import InputError


def can_load(path: str | Path) -> bool:
    """Whether ``path`` is a SavedModel folder or a ``.keras`` file."""
    p = Path(path)
    return (p.is_dir() and (p / "saved_model.pb").is_file()) or (p.suffix == ".keras" and p.is_file())


def save(model: Any, path: str | Path, example_inputs: Sequence[Any] = ()) -> None:
    """Write ``model`` (an imported model or a ``tf.Module``) as a SavedModel folder ``path``;
    reload it with ``tf.saved_model.load(path)``."""
    p = Path(path)
    if p.suffix:
        raise InputError(f"the tensorflow backend writes a SavedModel folder, not {p.name!r}")
    if example_inputs:
        model(*example_inputs)  # traces the call, so the SavedModel holds a concrete function
    if getattr(model, "_default_save_signature", None) is not None:  # an imported model: its serving signature
        tf.saved_model.save(model, str(p))
        return
    serve = getattr(model, "serve", None)
    signature = serve.get_concrete_function() if serve is not None and getattr(model, "input_signature", None) is not None else None
    tf.saved_model.save(model, str(p), signatures=signature)


def _example(spec: Any) -> Any:
    shape = [1 if d is None else d for d in spec.shape]
    dtype = tf.as_dtype(spec.dtype)
    if dtype.is_floating:
        return tf.constant(np.random.default_rng(0).standard_normal(shape).astype(dtype.as_numpy_dtype))
    return tf.zeros(shape, dtype)


class RestoredFunction:
    """A SavedModel's restored concrete function as the exporter takes it (``get_concrete_function``:
    its graph is walked as it is, the variables it captures becoming initializers by name, not a
    call of it through ``StatefulPartitionedCall``) and as a callable (``--check``)."""

    def __init__(self, owner: Any, fn: Any, keywords: Sequence[str] = ()):
        self._owner = owner  # the loaded object owns the variables the function captures
        self._fn = fn
        self._keywords = list(keywords)

    def get_concrete_function(self, *specs: Any) -> Any:
        return self._fn

    def __call__(self, *args: Any) -> Any:
        if not self._keywords:
            return self._fn(*args)
        out = self._fn(**dict(zip(self._keywords, args)))
        return tf.nest.flatten(out) if isinstance(out, dict) else out


def load(path: str | Path) -> tuple[Any, tuple[Any, ...]]:
    """A ``.keras`` model, or a SavedModel's function (:class:`RestoredFunction`: its ``__call__``,
    else its ``serving_default`` signature), and example inputs from its input signature."""
    p = Path(path)
    if p.suffix == ".keras":
        import keras

        model = keras.saving.load_model(str(p))
        specs = [tf.TensorSpec(t.shape, t.dtype) for t in model.inputs]
        return model, tuple(_example(s) for s in specs)
    if not can_load(p):
        raise InputError(f"{p} is no SavedModel folder (saved_model.pb) or .keras file")
    loaded = tf.saved_model.load(str(p))
    call = loaded.__call__ if callable(loaded) else None
    concrete = getattr(call, "concrete_functions", None) if call is not None else None
    if concrete:
        fn, keywords = concrete[0], ()
    elif "serving_default" in getattr(loaded, "signatures", {}):
        fn = loaded.signatures["serving_default"]
        keywords = sorted(fn.structured_input_signature[1])
    else:
        raise InputError(f"{p}: the SavedModel has no __call__ or serving_default signature to export")
    specs = [s for s in tf.nest.flatten(fn.structured_input_signature) if isinstance(s, tf.TensorSpec)]
    return RestoredFunction(loaded, fn, keywords), tuple(_example(s) for s in specs)
