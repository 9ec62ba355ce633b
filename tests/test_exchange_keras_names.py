"""A Keras model exported to ONNX and imported into torch keeps every Keras weight path as an
initializer name and a state_dict entry (an exchange test: it needs the TensorFlow and torch
backends, so it runs in the cross env)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx_ir as ir
import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("onnxport_tensorflow")
pytest.importorskip("onnxport_torch")

import onnxport  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "tensorflow"))
from _keras_names import expected_paths  # noqa: E402

sys.path.pop(0)


@pytest.mark.parametrize("cell", ["GRU", "LSTM", "SimpleRNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_torch_reimport_keeps_the_keras_names(cell, bidirectional):
    """Every Keras weight path is an initializer of the export and a state_dict entry of the torch
    re-import, one direction or two, and the re-import computes what Keras does."""
    import torch

    L = keras.layers
    rnn = getattr(L, cell)(4, name="rnn") if not bidirectional else L.Bidirectional(getattr(L, cell)(4), name="bi")
    model = keras.Sequential([keras.Input((6, 3)), rnn, L.Dense(2, name="head")])
    x = np.random.default_rng(11).standard_normal((2, 6, 3)).astype(np.float32)
    exported = onnxport.export_model(model, (x,))
    back = onnxport.import_model(ir.serde.serialize_model(exported), backend="torch")
    keys = back.initializer_keys  # ONNX initializer name -> state_dict key
    paths = set(expected_paths(model, {}))
    assert len(paths) == (8 if bidirectional else 5) and paths <= set(keys)
    state = back.state_dict()
    assert all(keys[p] in state for p in paths)
    with torch.no_grad():
        got = back(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, np.asarray(model(x)), rtol=1e-4, atol=1e-5)
