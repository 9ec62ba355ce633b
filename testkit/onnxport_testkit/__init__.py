"""onnxport-testkit: generated tests for every primitive of every installed backend."""

from .cases import NodeCase, node_cases
from .compare import compare_outputs, tolerance

__all__ = ["NodeCase", "compare_outputs", "node_cases", "tolerance"]
