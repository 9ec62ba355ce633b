"""Export primitives: TensorFlow ops -> ONNX, one file per op family."""
