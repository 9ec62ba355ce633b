"""The version of the onnxport core."""

__version__ = "0.1.0"
