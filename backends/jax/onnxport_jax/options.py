"""The JAX backend's import and export options (checked by the core, see :mod:`onnxport.plugin.options`)."""

from __future__ import annotations

from onnxport.plugin.options import ANY, Option, common_export_options

IMPORT_OPTIONS: tuple[Option, ...] = (
    Option("trainable", "which float initializers become params", ("auto", "all", "none"), "auto"),
    Option("x64", "64-bit types: 'auto' runs them in jax.enable_x64, False follows jax_enable_x64 "
           "(32-bit where it is off), True always 64-bit", ("auto", True, False), "auto"),
    Option("training", "the model's initial training mode", (bool,), False),
    Option("seed", "starts the key sequence calls draw per-call PRNG keys from", (int, None), None),
    Option("channels_last", "run 4-D image activations NHWC inside apply", (bool,), True),
)

EXPORT_OPTIONS: tuple[Option, ...] = common_export_options() + (
    Option("params", "the pytree fn(params, *inputs) takes first; its leaves become initializers", (ANY,)),
    Option("dynamic_shapes", "per input a dict from axis to a symbolic dim name", (list, tuple, None), None),
)
