"""Call-time refusals in the tensorflow backend: growing ops sized before they allocate, bad shapes name the node."""

from __future__ import annotations

import numpy as np
import pytest

import onnxport
from onnxport.errors import ConversionError
from tests._hostile import BOMB_OPS, BUDGET, bomb_model, inconsistent_matmul


@pytest.mark.parametrize("op", BOMB_OPS)
def test_growing_ops_are_sized_before_they_run(op: str, monkeypatch) -> None:
    monkeypatch.setenv("ONNXPORT_MAX_ELEMENTS", str(BUDGET))
    model = onnxport.import_model(bomb_model(op), backend="tensorflow")
    with pytest.raises(ConversionError, match=r"'bomb'.*elements, more than"):
        model()


def test_inconsistent_shapes_fail_as_conversion_error_naming_the_node() -> None:
    model = onnxport.import_model(inconsistent_matmul(), backend="tensorflow")
    with pytest.raises(ConversionError, match=r"'proj' \(ai.onnx::MatMul\)"):
        model(np.ones((8, 2), np.float32))
