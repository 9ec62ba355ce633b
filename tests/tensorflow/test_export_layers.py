"""Keras layer primitives (module export primitives, ``onnxport.module_exporter``): each sample
exported whole, checked, compared with Keras in onnxruntime and round-tripped through the TF importer."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import onnxport  # noqa: E402
from onnxport.errors import RegistryError  # noqa: E402
from onnxport_testkit.compare import tolerance  # noqa: E402

# the registry imports the primitive modules in their seeded random state (the samples' inputs and
# the layers' initializer seeds are the same on every run); then they are imported here
onnxport.registry().load("tensorflow")
from onnxport_tensorflow.ops.export import normalization, rnn  # noqa: E402

_CASES = [(kind, s) for mod in (rnn, normalization) for kind, samples in mod.SAMPLES.items() for s in samples]


def _run(proto, xs):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: np.asarray(x) for i, x in zip(sess.get_inputs(), xs)})


@pytest.mark.parametrize("kind, sample", _CASES, ids=[f"{k}-{s.name}" for k, s in _CASES])
def test_layer_primitive_sample(kind, sample):
    layer = sample.fn
    xs = tuple(sample.args)
    want = [np.asarray(t) for t in tf.nest.flatten(layer(*xs, training=False))]
    model = onnxport.export_model(layer, xs)
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    kinds = [n.op_type for n in proto.graph.node]
    assert set(sample.emits) <= set(kinds)
    assert "Loop" not in kinds  # the traced While loop of a recurrent layer is not exported
    assert f"keras.layers.{kind}" in model.meta.get(onnxport.exporting.pipeline.targets_key("tensorflow"), [])
    got = _run(proto, xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, *tolerance(w.dtype, sample.rtol, sample.atol))
    back = onnxport.import_model(model, backend="tensorflow")
    again = onnxport.get_backend("tensorflow").run(back, list(xs))
    for g, w in zip(again, want):
        np.testing.assert_allclose(np.asarray(g), w, *tolerance(w.dtype, sample.rtol, sample.atol))


def test_a_layer_norm_exported_with_a_wrong_epsilon_fails_its_small_sample():
    from tests._wrong_epsilon import wrong_epsilon

    sample = next(s for s in normalization.SAMPLES["LayerNormalization"] if s.name == "small")
    xs = tuple(sample.args)
    want = np.asarray(sample.fn(*xs, training=False))
    proto = ir.serde.serialize_model(onnxport.export_model(sample.fn, xs))
    rtol, atol = tolerance(want.dtype, sample.rtol, sample.atol)
    np.testing.assert_allclose(_run(proto, xs)[0], want, rtol, atol)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(_run(wrong_epsilon(proto), xs)[0], want, rtol, atol)


def test_layer_primitives_are_module_export_primitives():
    reg = onnxport.registry()
    keys = {p.key for p in reg.module_exports("tensorflow")}
    for cls in (keras.layers.LSTM, keras.layers.GRU, keras.layers.SimpleRNN, keras.layers.Bidirectional,
                keras.layers.BatchNormalization, keras.layers.LayerNormalization):
        assert reg.find_module_export("tensorflow", cls) is not None
        assert not any(p.target.startswith("keras.layers.") for p in reg.exports("tensorflow"))
    assert len(keys) == 6
    with pytest.raises(RegistryError, match="duplicate module export primitive"):
        reg.add_module_export("tensorflow", keras.layers.LSTM, lambda g, layer, x: x)


def test_a_subclass_is_not_claimed_by_its_base_class_primitive():
    class MyLSTM(keras.layers.LSTM):
        pass

    layer = MyLSTM(3)
    x = np.random.default_rng(0).uniform(-1, 1, (2, 4, 3)).astype("float32")
    want = np.asarray(layer(x, training=False))
    proto = ir.serde.serialize_model(onnxport.export_model(layer, (x,)))
    kinds = [n.op_type for n in proto.graph.node]
    assert "LSTM" not in kinds and "Loop" in kinds  # exported op by op, through its While loop
    np.testing.assert_allclose(_run(proto, (x,))[0], want, rtol=1e-4, atol=1e-5)
