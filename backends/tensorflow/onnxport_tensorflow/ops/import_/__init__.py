"""Import primitives: one ONNX op (family) -> TensorFlow ops, one file each."""
