"""The TensorFlow backend object's export hooks (:class:`onnxport.plugin.backend.Exporter`), used by the
testkit: which objects the exporter takes, sample preparation and checks, native runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

import onnxport
from onnxport.errors import InputError
from onnxport.exporting import pipeline as _export
from onnxport.plugin.backend import Exporter
from onnxport.plugin.testkit_support import TestkitSupport

from .exporter import _LAYOUT_KEY, _is_concrete, _is_keras, _traceable, export_model, variable_names  # noqa: F401
from .keras_inputs import keras_call


class ExportSupport(Exporter, TestkitSupport):
    """The TensorFlow backend's export part (:class:`onnxport.plugin.backend.Exporter`)."""

    name = "tensorflow"

    def export_model(self, obj: Any, example_inputs: Any = (), **options: Any) -> ir.Model:
        """:func:`export_model` (keyword inputs are not supported: ``example_kwargs`` must be empty)."""
        if options.pop("example_kwargs", None):
            raise InputError("the tensorflow exporter takes positional inputs only")
        return export_model(obj, example_inputs, **options)

    @staticmethod
    def prepare_export_sample(sample: Any, target: str | None = None) -> tuple[Any, dict[str, Any]]:
        """Dim 0 symbolic (``batch``) on the first input and on the inputs of its rank and batch size;
        the others (a broadcast operand, gather indices) static."""
        shapes = [np.shape(a) for a in sample.args]
        if not shapes or not shapes[0]:
            return sample, {"dynamic_shapes": [None] * len(shapes)}
        first = shapes[0]
        dyn = [{0: "batch"} if len(s) == len(first) and s[:1] == first[:1] and s[0] > 1 else None for s in shapes]
        return sample, {"dynamic_shapes": dyn}

    def check_exported_sample(self, prim: Any, sample: Any, model: ir.Model) -> None:
        """The sample traced one of the TF ops (or Keras layers) its primitive is registered for."""
        targets = {p.target for p in onnxport.registry().exports(self.name) if p.fn is prim.fn}
        traced = model.meta.get(_export.targets_key(self.name), [])
        assert targets & set(traced), f"the sample exercises none of {sorted(targets)}; traced: {traced}"

    @staticmethod
    def run_native(fn: Callable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[np.ndarray]:
        """The tensor leaves of ``fn``'s output (Keras layers with ``training=False``, called with the
        inputs in the form the exporter calls them: ``model([a, b])`` for a two-input functional model)."""
        if _is_keras(fn) and not kwargs:
            call = keras_call(fn, tuple(args))
            out = fn(*call.pack(call.flat), training=False)
        else:
            out = fn(*args, training=False, **kwargs) if _is_keras(fn) else fn(*args, **kwargs)
        return [np.asarray(t) for t in tf.nest.flatten(out)]

    @staticmethod
    def check_roundtrip(sample: Any, imported: Any) -> None:
        """Every variable of a Keras / TF sample comes back as a variable under its exported
        name, with its value (weights stored in an ONNX layout, Conv kernels, keep their name)."""
        fn, holder = _traceable(sample.fn)
        ours = {name: var for name, var in variable_names(holder, fn).values()}
        back = getattr(imported, "weights", None)
        assert isinstance(back, dict), f"the imported {type(imported).__name__} has no weights dict"
        floats = {n for n, v in ours.items() if np.issubdtype(np.asarray(v.numpy()).dtype, np.floating)}
        missing = sorted(floats - set(back))
        assert not missing, f"variables {missing} are missing after the round trip; it has {sorted(back)}"
        for name, var in ours.items():
            if not np.issubdtype(np.asarray(var.numpy()).dtype, np.floating):
                continue  # integer state (Keras seed generators) is not read by inference graphs
            want, got = np.asarray(var.numpy()), np.asarray(back[name].numpy())
            if want.shape == got.shape:
                np.testing.assert_array_equal(got, want, err_msg=f"variable {name!r} changed in the round trip")

    @staticmethod
    def to_numpy(x: Any) -> np.ndarray:
        return np.asarray(x)

    @staticmethod
    def from_numpy(a: np.ndarray) -> Any:
        return tf.convert_to_tensor(a)
