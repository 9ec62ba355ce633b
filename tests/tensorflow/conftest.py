"""Every Keras model or layer a TensorFlow test exports is checked to keep its Keras weight paths
as initializer names, through a re-import into TensorFlow too (:mod:`._keras_names`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _keras_weight_paths_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    if "onnxport_tensorflow" not in sys.modules and "keras" not in sys.modules:
        return  # a test that exports nothing Keras
    try:
        from onnxport_tensorflow import export_support
        from onnxport_tensorflow.exporter import _is_keras
    except ImportError:
        return
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from _keras_names import check_keras_names
    finally:
        sys.path.pop(0)
    original = export_support.export_model

    def checked(obj: Any, example_inputs: Any = (), **options: Any) -> Any:
        model = original(obj, example_inputs, **options)
        if _is_keras(obj):
            check_keras_names(obj, model, options)
        return model

    monkeypatch.setattr(export_support, "export_model", checked)
