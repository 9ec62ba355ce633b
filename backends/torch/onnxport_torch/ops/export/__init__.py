"""Export primitives: one ATen op (overloads grouped) -> ONNX nodes, one file per op family.

Each primitive is ``fn(g, *args, **kwargs)``: ``g`` is :class:`onnxport_torch.export_graph.TorchGraph`,
tensor arguments are ``onnx_ir.Value``s, symbolic sizes are 0-d int64 values, everything else
is the Python value the FX graph holds. Return a value, or a tuple for multi-output ops.
"""
