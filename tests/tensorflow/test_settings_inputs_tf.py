"""An imported model called as a user calls it: settings (axes, split sizes) that arrive as graph
inputs, and inputs given in ONNX types TensorFlow has no tensor for (ml_dtypes arrays)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf
from onnx import TensorProto, helper

import onnxport
from onnxport.errors import InputError
from tests.conftest import make_model, tensor_info


def _reduce_model(through_identity: bool = False):
    nodes = []
    axes = "axes"
    if through_identity:  # the setting is computed from the input, not the input itself
        nodes.append(helper.make_node("Identity", ["axes"], ["axes2"], name="copy"))
        axes = "axes2"
    nodes.append(helper.make_node("ReduceSum", ["x", axes], ["y"], keepdims=0, name="sum"))
    return make_model(nodes, [tensor_info("x", [2, 3, 4]), tensor_info("axes", [1], TensorProto.INT64)],
                      [tensor_info("y", None)])


@pytest.mark.parametrize("through_identity", [False, True])
def test_a_setting_given_as_an_input_is_specialised_per_value(through_identity: bool) -> None:
    model = onnxport.import_model(_reduce_model(through_identity), backend="tensorflow")
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for axis in (0, 2, 0, -1):
        got = model(x, np.array([axis], np.int64))
        np.testing.assert_array_equal(got.numpy(), x.sum(axis=axis))
    settings = model._impl.settings
    assert settings.static == (1,)  # the axes, not the data
    assert len(settings._functions) == 3  # one trace per distinct value, reused


def test_split_sizes_as_an_input() -> None:
    model = make_model([helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0, name="split")],
                       [tensor_info("x", [5]), tensor_info("sizes", [2], TensorProto.INT64)],
                       [tensor_info("a", None), tensor_info("b", None)])
    tf_model = onnxport.import_model(model, backend="tensorflow")
    x = np.arange(5, dtype=np.float32)
    for sizes in ([1, 4], [3, 2]):
        a, b = tf_model(x, np.array(sizes, np.int64))
        np.testing.assert_array_equal(a.numpy(), x[:sizes[0]])
        np.testing.assert_array_equal(b.numpy(), x[sizes[0]:])


def test_a_symbolic_setting_in_a_users_tf_function_names_the_input() -> None:
    model = onnxport.import_model(_reduce_model(), backend="tensorflow")
    x = np.ones((2, 3, 4), np.float32)

    @tf.function
    def symbolic(x, axes):
        return model(x, axes)

    with pytest.raises(InputError, match=r"input 'axes' must be a concrete value when the model is traced"):
        symbolic(tf.constant(x), tf.constant([1], tf.int64))

    @tf.function
    def constant_axes(x):
        return model(x, np.array([1], np.int64))  # a constant of the user's trace: specialised on it

    np.testing.assert_array_equal(constant_axes(tf.constant(x)).numpy(), np.full((2, 4), 3, np.float32))


@pytest.mark.parametrize(("onnx_type", "np_type", "values"), [
    (TensorProto.INT4, ml_dtypes.int4, [-8, -1, 0, 7]),
    (TensorProto.UINT4, ml_dtypes.uint4, [0, 1, 9, 15]),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, [-448.0, -0.5, 0.0, 1.75]),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2, [-57344.0, 0.25, 0.0, 3.0]),
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, [-2.5, 0.0, 1.0, 3.140625]),
])
def test_inputs_in_their_onnx_type_are_accepted(onnx_type: int, np_type, values) -> None:
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT, name="cast")],
                       [tensor_info("x", [4], onnx_type)], [tensor_info("y", [4])])
    tf_model = onnxport.import_model(model, backend="tensorflow")
    x = np.array(values, dtype=np.float32).astype(np_type)
    got = tf_model(x)
    np.testing.assert_array_equal(got.numpy(), x.astype(np.float32))
    with pytest.raises(InputError, match="no implicit casts"):
        tf_model(np.zeros(4, np.float64))


def test_the_testkits_run_is_the_users_call() -> None:
    model = onnxport.import_model(_reduce_model(), backend="tensorflow")
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    backend = onnxport.get_backend("tensorflow")
    (got,) = backend.run(model, [x, np.array([1], np.int64)])
    np.testing.assert_array_equal(got, model(x, np.array([1], np.int64)).numpy())
    with pytest.raises(InputError, match="no implicit casts"):  # the call's checks, nothing relaxed
        backend.run(model, [x, np.array([1], np.int32)])


def test_settings_tensorflow_takes_as_tensors_trace_once() -> None:
    """CumSum's axis and Trilu's k go to TensorFlow as tensors: no specialisation, one trace."""
    model = make_model([helper.make_node("CumSum", ["x", "axis"], ["c"], name="cumsum"),
                        helper.make_node("Trilu", ["c", "k"], ["y"], upper=1, name="trilu")],
                       [tensor_info("x", [3, 4]), tensor_info("axis", [], TensorProto.INT64),
                        tensor_info("k", [], TensorProto.INT64)], [tensor_info("y", [3, 4])])
    tf_model = onnxport.import_model(model, backend="tensorflow")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for axis, k in ((0, 0), (1, -1), (-1, 2), (0, 5)):
        c = np.cumsum(x, axis=axis)
        want = np.triu(c, k)
        got = tf_model(x, np.array(axis, np.int64), np.array(k, np.int64))
        np.testing.assert_array_equal(got.numpy(), want)
    assert tf_model._impl.settings.static == ()
    assert tf_model.serve.experimental_get_tracing_count() == 1
