"""The serving signature of an imported model: what ``tf.saved_model.save(model, path)`` writes.

``tf.saved_model.save`` without ``signatures=`` takes the root object's ``_default_save_signature``
function when it has one; :class:`~onnxport_tensorflow.importer.TfModel` gives it the function
built here, so a plain save writes a ``serving_default`` signature that TF Serving and
``tf.lite.TFLiteConverter.from_saved_model`` take:

- its inputs are the graph's real inputs, keyed by their ONNX names (made valid TF names, a
  ``_<n>`` suffix where two collide), with the graph's dtypes and static dims (symbolic dims are
  ``None``). An initializer that an older-IR file also lists as a graph input is a weight, not
  an input: the importer holds it in ``model.weights[name]`` (a ``tf.Variable``) and the signature
  does not take it. To serve other values, assign them to that variable before saving
  (``model.weights[name].assign(value)``); the SavedModel holds the variable's value;
- its outputs are a dict keyed by the ONNX output names (made valid and unique the same way).

A model with a non-tensor input or output (sequences, optionals) has no such signature (None):
``tf.saved_model.save`` then writes the model's ``__call__`` only, as before. The function follows
``model.train()`` / ``model.eval()``: it is rebuilt when the model's traced function changes.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

import tensorflow as tf

#: model -> (the model's traced function the signature calls, the signature function or None)
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _valid(name: str, taken: set[str]) -> str:
    """``name`` as a TF signature key (letters, digits, ``_./-``; not starting with ``_``/``-``),
    unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9_.\-/]", "_", name or "")
    if not re.match(r"[A-Za-z0-9.]", base):
        base = "x" + base
    out, i = base, 0
    while out in taken:
        i += 1
        out = f"{base}_{i}"
    taken.add(out)
    return out


def serving_signature(model: Any) -> Any:
    """The ``tf.function`` ``tf.saved_model.save`` writes as ``serving_default`` for ``model`` (an
    imported :class:`~onnxport_tensorflow.importer.TfModel`), or None where its inputs or outputs
    are not all tensors."""
    serve = model.serve
    hit = _CACHE.get(model)
    if hit is not None and hit[0] is serve:
        return hit[1]
    fn = _build(model, serve)
    _CACHE[model] = (serve, fn)
    return fn


def _build(model: Any, serve: Any) -> Any:
    specs = model.input_signature
    if specs is None:
        return None
    taken: set[str] = set()
    specs = [tf.TensorSpec(s.shape, s.dtype, name=_valid(name, taken)) for s, name in zip(specs, model.input_names)]
    taken = set()
    keys = [_valid(name, taken) for name in model.output_names]

    def signature(*inputs: Any) -> dict[str, tf.Tensor]:
        out = serve(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        return dict(zip(keys, outs))

    fn = tf.function(signature, input_signature=specs, autograph=False)
    try:
        outputs = fn.get_concrete_function().structured_outputs
    except Exception:  # noqa: BLE001 - a graph the signature cannot trace: no signature, save writes __call__
        return None
    if not all(isinstance(v, tf.Tensor) for v in outputs.values()):
        return None
    return fn
