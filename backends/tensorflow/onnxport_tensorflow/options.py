"""The TensorFlow backend's import and export options (checked by the core, see :mod:`onnxport.plugin.options`)."""

from __future__ import annotations

from onnxport.plugin.options import Option, common_export_options

IMPORT_OPTIONS: tuple[Option, ...] = (
    Option("trainable", "which float initializers become trainable variables", ("auto", "all", "none"), "auto"),
    Option("training", "the model's initial training mode", (bool,), False),
    Option("seed", "seeds ops without a seed attribute", (int, None), None),
    Option("channels_last", "run 4-D image activations NHWC inside the graph", (bool,), True),
    Option("fuse", "at inference, fold a BatchNormalization into the Conv that feeds it", (bool,), True),
    Option("embed_conv", "constant Conv weights are graph constants of the traced function", (bool,), True),
)

EXPORT_OPTIONS: tuple[Option, ...] = (
    common_export_options("opset", "optimize", "fold_batchnorm", "fuse", "input_names", "output_names")
    + (
        Option("functions", "model-local functions (not supported by this exporter yet)", (False,), False),
        Option("dynamic_shapes", "per input a dict from axis to a symbolic dim name (default: dim 0 is batch)",
               (list, tuple, None), None),
        Option("inputs_as_nchw", "graph inputs (by position or name) given channels-first", (list, tuple), ()),
    )
)
