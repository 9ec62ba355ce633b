"""The graph layer: load and save (safe external data, file-backed weights), validation,
deserialization, shape inference, size checks, dtypes and graph walking, on onnx-ir's model."""
