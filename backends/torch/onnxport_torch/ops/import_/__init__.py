"""Import primitives: one ONNX op (family) -> torch, one file each."""
