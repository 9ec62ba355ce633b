"""Multi-input Keras models exported with their examples given as a torch user (``(a, b)``) or a
Keras user (``([a, b],)``, ``[a, b]``, a dict) gives them: every form that fits the model's call
exports the same graph, compared with Keras in onnxruntime; a form that fits no call is an
InputError saying what the call takes."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")
ort = pytest.importorskip("onnxruntime")

import onnxport  # noqa: E402
from onnxport.errors import InputError  # noqa: E402

L = keras.layers


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def _functional(n: int, *, as_dict: bool = False) -> keras.Model:
    """``n`` inputs (``in0`` ...), one Dense shared by all, joined by a Concatenate."""
    ins = [keras.Input((4,), name=f"in{i}") for i in range(n)]
    shared = L.Dense(3, name="shared")
    out = L.Dense(2, name="head")(L.Concatenate()([shared(t) for t in ins]))
    return keras.Model({t.name: t for t in ins} if as_dict else ins, out)


class _TwoArgs(keras.Model):
    """A subclassed model whose call takes two positional tensors."""

    def __init__(self):
        super().__init__(name="two_args")  # Keras names it "__two_args", which TF refuses as a root scope
        self.shared = L.Dense(3, name="shared")

    def call(self, x, y, training=None):
        return self.shared(x) - 2.0 * self.shared(y)


class _OneList(keras.Model):
    """A subclassed model whose call takes one list of tensors."""

    def __init__(self):
        super().__init__(name="one_list")
        self.shared = L.Dense(3, name="shared")

    def call(self, inputs):
        return self.shared(inputs[0]) * self.shared(inputs[1]) + inputs[2][:, :3]


def _ort(model: ir.Model, xs: list[np.ndarray]) -> tuple[list[str], list[np.ndarray]]:
    sess = ort.InferenceSession(ir.serde.serialize_model(model).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return names, sess.run(None, dict(zip(names, xs)))


def _check(model, xs: list[np.ndarray], want: np.ndarray, forms: list, names: list[str]) -> None:
    for form in forms:
        exported = onnxport.export_model(model, form)
        got_names, got = _ort(exported, xs)
        assert got_names == names, form
        np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
        assert {"shared/kernel", "shared/bias"} <= set(exported.graph.initializers)  # one shared layer


@pytest.mark.parametrize("n", [2, 3])
def test_functional_model_takes_positional_list_and_dict_examples(n):
    model = _functional(n)
    xs = [rand(2, 4, seed=i) for i in range(n)]
    want = np.asarray(model(xs))
    names = [f"in{i}" for i in range(n)]
    forms = [tuple(xs), (list(xs),), list(xs), dict(zip(names, xs)), (dict(zip(names, xs)),)]
    _check(model, xs, want, forms, names)


def test_dict_keyed_functional_model():
    """A model built on a dict of inputs: examples by key, or positionally in ``model.inputs``'
    order (Keras sorts a dict's inputs by key)."""
    model = _functional(2, as_dict=True)
    a, b = rand(3, 4, seed=1), rand(3, 4, seed=2)
    want = np.asarray(model({"in0": a, "in1": b}))
    assert [t.name for t in model.inputs] == ["in0", "in1"]
    _check(model, [a, b], want, [{"in1": b, "in0": a}, (a, b), ([a, b],)], ["in0", "in1"])


def test_subclassed_model_with_two_positional_arguments():
    model = _TwoArgs()
    a, b = rand(2, 4, seed=3), rand(2, 4, seed=4)
    want = np.asarray(model(a, b))
    _check(model, [a, b], want, [(a, b), [a, b]], ["x", "y"])


def test_subclassed_model_taking_one_list():
    model = _OneList()
    xs = [rand(2, 4, seed=i) for i in range(3)]
    want = np.asarray(model(xs))
    _check(model, xs, want, [tuple(xs), (list(xs),), list(xs)], ["inputs_0", "inputs_1", "inputs_2"])


def test_exported_functional_model_runs_at_another_batch():
    model = _functional(2)
    exported = onnxport.export_model(model, (rand(2, 4), rand(2, 4, seed=1)))
    xs = [rand(5, 4, seed=7), rand(5, 4, seed=8)]
    np.testing.assert_allclose(_ort(exported, xs)[1][0], np.asarray(model(xs)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, examples, says", [
    (lambda: _functional(2), lambda: (rand(2, 4),), ["'in0' (None, 4) float32", "'in1'", "(tensor[2, 4],)"]),
    (lambda: _functional(2), lambda: (rand(2, 4),) * 3, ["takes 2 input(s)"]),
    (lambda: _functional(2), lambda: {"in0": rand(2, 4), "other": rand(2, 4)}, ["'in0'", "'other'"]),
    (lambda: _TwoArgs(), lambda: (rand(2, 4),), ["call(x, y, training=None)"]),
    (lambda: _TwoArgs(), lambda: (rand(2, 4),) * 3, ["call(x, y, training=None)"]),
    (lambda: _TwoArgs(), lambda: ([rand(2, 4), rand(2, 4)],), ["call(x, y, training=None)"]),
], ids=["functional_one_of_two", "functional_three_of_two", "functional_unknown_key", "two_args_one",
        "two_args_three", "two_args_as_list"])
def test_examples_that_fit_no_call_say_what_the_call_takes(make, examples, says):
    with pytest.raises(InputError) as info:
        onnxport.export_model(make(), examples())
    for part in says:
        assert part in str(info.value)


@pytest.mark.parametrize("make, call, names", [
    (lambda: L.Attention(), lambda layer, q, v: layer([q, v]), ["inputs_0", "inputs_1"]),  # call(inputs, ..., flags)
    (lambda: L.MultiHeadAttention(2, 2), lambda layer, q, v: layer(q, v), ["query", "value"]),  # call(query, value, key=None ...)
], ids=["attention", "multi_head_attention"])
def test_keras_layers_given_two_tensors(make, call, names):
    """A call whose later arguments are flags (``return_attention_scores=False``) takes several
    tensors as one list; one whose later arguments default to None takes them positionally."""
    layer = make()
    q, v = rand(2, 3, 4, seed=1), rand(2, 5, 4, seed=2)
    want = np.asarray(call(layer, q, v))
    got_names, got = _ort(onnxport.export_model(layer, (q, v)), [q, v])
    assert got_names == names
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)


def test_convert_of_a_two_input_keras_file_checks(tmp_path, capsys):
    """``onnxport convert model.keras --check``: exported with one example per input, and the
    Keras model called as the exporter calls it for the check."""
    from onnxport.tools import cli

    _functional(2).save(tmp_path / "two.keras")
    code = cli.main(["convert", str(tmp_path / "two.keras"), "-o", str(tmp_path / "two.onnx"), "--check"])
    out, err = capsys.readouterr()
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("check:"))
    assert float(line.rsplit(":", 1)[1]) < 1e-5
