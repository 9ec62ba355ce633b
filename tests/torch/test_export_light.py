"""export(import(x)) gives back x's op types, initializers and outputs, for every light model.

x is the shipped light model with seeded random weights (:func:`onnxport_testkit.light.randomized`:
the shipped weights are all 0.02, with which a wrong op can still give the right output); the
re-exported y runs in onnxruntime and must give x's outputs (run in onnxruntime) on random inputs.

The light models (``onnx/backend/test/data/light``) store each weight ``W`` as
``ConstantOfShape(W__SHAPE)`` to stay small. Documented equivalences between x and the
re-exported model y (everything else must match exactly, op types as a multiset):

- a ``ConstantOfShape`` weight generator is its weight: the import materializes ``W``, so x's
  side is compared as the initializer ``W`` holding the generated value;
- ``Sum`` of two inputs is ``Add``; ``Dropout`` (inference: the identity) is no node;
  ``GlobalAveragePool`` is ``ReduceMean`` over the spatial axes (what torch computes);
- an integer initializer read as a shape (``OC2_DUMMY_1``, a Reshape's shape) is a ``Constant``:
  the import reads it once, so y holds it as a literal; initializers no node reads are dropped.
  Constant nodes are not counted.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import onnx_ir as ir
import pytest
import torch
from onnx import numpy_helper

import onnxport
from onnxport_testkit.light import light_models, random_inputs, randomized

LIGHT_MODELS = sorted(light_models())

_EQUIVALENT = {"Sum": "Add", "GlobalAveragePool": "ReduceMean"}
_DROPPED = {"Dropout", "Constant"}


def _x_side(x: onnx.ModelProto) -> tuple[Counter, dict[str, np.ndarray]]:
    """x's op types under the equivalences, and its weights with ConstantOfShape materialized."""
    inits = {i.name: numpy_helper.to_array(i) for i in x.graph.initializer}
    weights: dict[str, np.ndarray] = {}
    ops: Counter = Counter()
    for n in x.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            value = next((numpy_helper.to_array(a.t) for a in n.attribute if a.name == "value"), np.zeros(1, np.float32))
            weights[n.output[0]] = np.full(inits[n.input[0]].astype(np.int64), value.reshape(-1)[0])
            continue
        if n.op_type in _DROPPED:
            continue
        ops[_EQUIVALENT.get(n.op_type, n.op_type)] += 1
    for name, arr in inits.items():
        if arr.dtype.kind == "f":
            weights[name] = arr
    return ops, weights


def _ort_run(proto: onnx.ModelProto, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    sess = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip([i.name for i in sess.get_inputs()], inputs)))


def _roundtrip(name: str) -> None:
    x = randomized(onnx.load(light_models()[name]))
    inputs = random_inputs(x)
    imported = onnxport.import_model(x, backend="torch")
    y = ir.serde.serialize_model(onnxport.export_model(imported, tuple(torch.from_numpy(a) for a in inputs)))
    x_ops, x_weights = _x_side(x)
    y_ops = Counter(_EQUIVALENT.get(n.op_type, n.op_type) for n in y.graph.node if n.op_type not in _DROPPED)
    assert y_ops == x_ops, f"op types differ: only in x {dict(x_ops - y_ops)}, only in y {dict(y_ops - x_ops)}"
    y_inits = {i.name: numpy_helper.to_array(i) for i in y.graph.initializer}
    used = {i for n in x.graph.node for i in n.input}
    expected = {k: v for k, v in x_weights.items() if k in used}
    assert sorted(y_inits) == sorted(expected), (
        f"initializers differ: only in x {sorted(set(expected) - set(y_inits))[:5]}, "
        f"only in y {sorted(set(y_inits) - set(expected))[:5]}"
    )
    for k, arr in expected.items():
        np.testing.assert_array_equal(y_inits[k], arr.astype(y_inits[k].dtype), err_msg=k)
    # the numbers: y in onnxruntime gives x's outputs in onnxruntime
    x_out, y_out = _ort_run(x, inputs), _ort_run(y, inputs)
    assert len(y_out) == len(x_out) == len(x.graph.output)
    for a, e in zip(y_out, x_out):
        scale = float(np.abs(e).max())
        assert np.std(e) > 1e-3 * scale, f"{name}: the reference output is nearly constant"
        assert a.shape == e.shape, (a.shape, e.shape)
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5 * scale, err_msg=name)


def test_all_light_models_are_covered():
    assert len(LIGHT_MODELS) == 9


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_export_of_import_gives_back_ops_and_initializers(name):
    _roundtrip(name)
