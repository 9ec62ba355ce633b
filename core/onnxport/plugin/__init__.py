"""The plugin layer: the registry of primitives and adapters, the pluggy hookspecs and discovery,
the backend contract, op specs from onnx.defs, op facts, and applying the version adapters."""
