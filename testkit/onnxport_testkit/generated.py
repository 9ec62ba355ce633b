"""The generated tests. ``from onnxport_testkit.generated import *`` in a test module collects them."""

from __future__ import annotations

from .runner import run_node_case, run_random_case

__all__ = ["test_onnx_node_case", "test_onnx_random_case"]


def test_onnx_node_case(onnx_node_case) -> None:
    """An official ONNX backend node case, imported and run in one backend."""
    backend, case = onnx_node_case
    run_node_case(backend, case)


def test_onnx_random_case(onnx_random_case) -> None:
    """A node case's model on random inputs (and float64 where allowed), against onnxruntime."""
    backend, case, variant = onnx_random_case
    run_random_case(backend, case, variant)
