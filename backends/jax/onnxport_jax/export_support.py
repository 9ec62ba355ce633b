"""The JAX backend object's export hooks (:class:`onnxport.plugin.backend.Exporter`), used by the
testkit: which objects the exporter takes, sample preparation and checks, native runs."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import onnx_ir as ir

from onnxport.exporting import pipeline as _export
from onnxport.plugin.backend import Exporter
from onnxport.plugin.testkit_support import TestkitSupport

from . import layers
from .exporter import export_model


class ExportSupport(Exporter, TestkitSupport):
    """The JAX backend's export part (:class:`onnxport.plugin.backend.Exporter`); mixed in before
    :class:`onnxport.plugin.backend.Backend`, so its :meth:`from_numpy` is the backend's."""

    def export_model(self, obj: Any, example_inputs: Any = (), **options: Any) -> ir.Model:
        """:func:`export_model`; ``symbolic_batch=True`` (the testkit's samples) first tries dim 0
        of every input with more than one row symbolic (inputs with the same size share the
        name), and exports with static shapes where the function cannot be traced that way."""
        options.pop("example_kwargs", None)
        layer_opset = options.pop("layer_opset", None)
        if layer_opset is not None and options.get("opset") is None:
            options["opset"] = max(layer_opset, _export.DEFAULT_OPSET)
        if options.pop("symbolic_batch", False) and options.get("dynamic_shapes") is None:
            args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
            specs = tuple({0: f"n{np.shape(a)[0]}"} if np.ndim(a) and np.shape(a)[0] > 1 else None for a in args)
            if any(s is not None for s in specs):
                try:
                    return export_model(obj, example_inputs, dynamic_shapes=specs, **options)
                except Exception:  # noqa: BLE001 - shape-specialized code: the static export below
                    pass
        return export_model(obj, example_inputs, **options)

    def prepare_export_sample(self, sample: Any, target: str | None = None) -> tuple[Any, dict[str, Any]]:
        """Samples are exported with a symbolic dim 0 where they allow it (see :meth:`export_model`),
        so the testkit also runs them at a larger batch. A Flax layer primitive's samples are
        exported at its lowest opset where that is above the default (Attention: 23)."""
        lo = layers.min_opset(target) if target else None
        return sample, {"symbolic_batch": True, **({"layer_opset": lo} if lo is not None else {})}

    def from_numpy(self, a: np.ndarray) -> Any:
        """A JAX array of the same type (64-bit types made with x64 on, so they stay 64-bit)."""
        if np.dtype(a.dtype).kind in "OSU":
            return a  # strings stay numpy, as the importer keeps them
        with jax.enable_x64(True) if np.dtype(a.dtype).itemsize == 8 else contextlib.nullcontext():
            return jnp.asarray(a)

    def check_exported_sample(self, prim: Any, sample: Any, model: ir.Model) -> None:
        """The sample traced one of the JAX primitives its export function is registered for."""
        import onnxport

        targets = {p.target for p in onnxport.registry().exports("jax") if p.fn is prim.fn}
        traced = model.meta.get("onnxport.jax.targets", [])
        lo = layers.min_opset(prim.target)
        if lo is not None and model.opset_imports.get("", 0) < lo:
            # below its lowest opset a Flax layer runs its own call: the layer primitive is not used
            assert not targets & set(traced), f"{prim.target} used at opset {model.opset_imports.get('')}"
            return
        assert targets & set(traced), f"the sample exercises none of {sorted(targets)}; traced: {traced}"

    def run_native(self, fn: Callable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[np.ndarray]:
        out = fn(*args, **kwargs)
        return [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]
