"""Keras weight paths are initializer names for every Keras sample of the TensorFlow export
primitives (op primitives and layer primitives, all of them), recurrent and bidirectional layers
included, stacked and nested; a re-import into TensorFlow restores each name. Every other Keras
model the TensorFlow tests export is checked the same way by the autouse fixture of
``conftest.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx_ir as ir
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import onnxport  # noqa: E402
from onnxport_tensorflow.ops.export import normalization, rnn  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _keras_names import check_keras_names, expected_paths  # noqa: E402

sys.path.pop(0)

L = keras.layers


def _keras_samples() -> list[tuple[str, object]]:
    """(id, sample) of every export sample whose callable is a Keras layer or model."""
    out: dict[str, object] = {}
    seen: set[int] = set()  # one sample shared by several primitives (MaxPool, MaxPool3D ...) once
    for prim in sorted(onnxport.registry().exports("tensorflow"), key=lambda p: p.target):
        for i, s in enumerate(prim.samples):
            if isinstance(s.fn, keras.layers.Layer) and id(s) not in seen:
                seen.add(id(s))
                out.setdefault(f"{prim.target}-{s.name or i}", s)
    for mod in (rnn, normalization):
        for kind, samples in mod.SAMPLES.items():
            for s in samples:
                out.setdefault(f"keras.layers.{kind}-{s.name}", s)
    return sorted(out.items())


SAMPLES = _keras_samples()


def test_the_samples_cover_every_layer_primitive_and_keras_op_sample():
    kinds = {key.split("-")[0] for key, _ in SAMPLES}
    assert {f"keras.layers.{k}" for k in ("LSTM", "GRU", "SimpleRNN", "Bidirectional", "BatchNormalization",
                                          "LayerNormalization")} <= kinds
    assert len(SAMPLES) > 10


@pytest.mark.parametrize("key, sample", SAMPLES, ids=[k for k, _ in SAMPLES])
def test_sample_keeps_keras_weight_paths(key, sample):
    backend = onnxport.get_backend("tensorflow")
    prepared, options = backend.prepare_export_sample(sample)
    model = onnxport.export_model(prepared.fn, tuple(prepared.args), **options)
    assert expected_paths(prepared.fn, options) or not prepared.fn.weights  # a weighted layer names some
    check_keras_names(prepared.fn, model, options)


def _rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("make", [
    lambda: keras.Sequential([keras.Input((6, 3)), L.Bidirectional(L.GRU(4), name="bi")]),
    lambda: keras.Sequential([keras.Input((6, 3)), L.Bidirectional(L.GRU(4, reset_after=False, return_sequences=True)),
                              L.Bidirectional(L.LSTM(3, return_sequences=True)), L.Bidirectional(L.SimpleRNN(2))]),
    lambda: keras.Sequential([keras.Input((None, 3)), L.GRU(4, return_sequences=True), L.LSTM(4, return_sequences=True),
                              L.SimpleRNN(3, return_sequences=True), L.Bidirectional(L.GRU(2), merge_mode="mul"),
                              L.Dense(2)]),
    lambda: keras.Sequential([keras.Input((6, 3)), L.Bidirectional(L.LSTM(3), backward_layer=L.LSTM(3, go_backwards=True))]),
], ids=["bigru", "stacked_bidirectional", "stacked_mixed", "explicit_backward_layer"])
def test_recurrent_models_keep_every_kernel_path(make):
    model = make()
    x = _rand(2, 6, 3)
    exported = onnxport.export_model(model, (x,))  # the conftest fixture checks the names too
    paths = expected_paths(model, {})
    assert len(paths) >= 6 and all(p in exported.graph.initializers for p in paths)
    kernels = [p for p in paths if p.endswith("kernel")]
    assert kernels and all(p in exported.graph.initializers for p in kernels)
    import onnxruntime as ort

    sess = ort.InferenceSession(ir.serde.serialize_model(exported).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {sess.get_inputs()[0].name: x})[0], np.asarray(model(x)),
                               rtol=1e-4, atol=1e-5)


def test_the_check_fails_on_a_lost_name():
    model = keras.Sequential([keras.Input((3,)), L.Dense(2, name="d")])
    exported = onnxport.export_model(model, (_rand(2, 3),))
    exported.graph.initializers["d/kernel"].name = "renamed"
    with pytest.raises(AssertionError, match="d/kernel"):
        check_keras_names(model, exported, {}, reimport=False)


def test_bidirectional_gru_from_a_keras_saved_model_keeps_its_paths(tmp_path):
    """``model.export`` (a SavedModel) read back and exported from its ``serve`` endpoint: no Keras
    layer to record, the backward GRU traced op by op (its ReverseV2 a Slice with step -1), every
    kernel under its saved variable path."""
    import onnxruntime as ort

    model = keras.Sequential([keras.Input((6, 3)), L.Bidirectional(L.GRU(4), name="bi")], name="net")
    model.export(str(tmp_path / "saved"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    x = _rand(2, 6, 3)
    exported = onnxport.export_model(loaded.serve, (x,))
    paths = [f"net/{p}" for p in expected_paths(model, {})]
    assert len(paths) == 6 and all(p in exported.graph.initializers for p in paths)
    sess = ort.InferenceSession(ir.serde.serialize_model(exported).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    for batch in (x, _rand(3, 6, 3)):
        np.testing.assert_allclose(sess.run(None, {sess.get_inputs()[0].name: batch})[0], np.asarray(model(batch)),
                                   rtol=1e-4, atol=1e-5)
