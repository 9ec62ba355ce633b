"""The torch backend's import and export options (checked by the core, see :mod:`onnxport.plugin.options`)."""

from __future__ import annotations

from onnxport.plugin.options import ANY, Option, common_export_options

IMPORT_OPTIONS: tuple[Option, ...] = (
    Option("modules", "ONNX ops with a native layer become torch.nn modules (Conv2d, Linear ...)", (bool,), True),
    Option("trainable", "which float initializers become trainable parameters", ("auto", "all", "none"), "auto"),
    Option("hierarchy", "rebuild the exporter's module hierarchy from node metadata", (bool,), True),
    Option("training", "the module's initial train/eval mode", (bool,), False),
    Option("device", "the device the weights are placed on at import (a torch.device or its name)", (ANY,), None),
    Option("dtype", "the floating dtype the module computes in (a torch.dtype or its name)", (ANY,), None),
)

EXPORT_OPTIONS: tuple[Option, ...] = common_export_options("opset", "optimize", "fold_batchnorm", "functions") + (
    Option("dynamic_shapes", "torch.export dynamic shapes, or per input a dict from axis to a dim name", (ANY,)),
    Option("kwargs", "keyword inputs of forward", (dict, None), None),
    Option("strict", "torch.export's strict mode", (bool,), False),
    Option("decompose", "decompose to core ATen first (None: only where needed)", (bool, None), None),
)
