"""onnxport-torch: ONNX <-> PyTorch."""

from .importer import OnnxModule, TorchBackend

__all__ = ["OnnxModule", "TorchBackend"]
