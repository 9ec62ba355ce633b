"""Models imported with ``x64=False`` under ``jax_enable_x64`` off: 64-bit types computed in 32
bits; values that need 64 bits refused naming the value and the fix (onnxport_jax.narrow)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import onnxport  # noqa: E402
from onnxport.errors import InputError, OnnxportError  # noqa: E402
from onnxport_jax.narrow import NeedsX64Error, NeedsX64InputError  # noqa: E402

pytestmark = pytest.mark.skipif(jax.config.jax_enable_x64, reason="checks behaviour with jax_enable_x64 off")

I64_MAX, I64_MIN = 2**63 - 1, -(2**63)


def _model(nodes, inputs, outputs, initializers=(), opset=18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _i64(name: str, values) -> onnx.TensorProto:
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def _narrow(model: onnx.ModelProto):
    m = onnxport.import_model(model, backend="jax", x64=False)
    assert m.narrow and not m.needs_x64
    return m


def test_int64_and_float64_compute_in_32_bits() -> None:
    model = _model([helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Cast", ["c"], ["d"], to=TensorProto.DOUBLE)],
                   [_vi("a", TensorProto.INT64, [2]), _vi("b", TensorProto.INT64, [2])],
                   [_vi("c", TensorProto.INT64, [2]), _vi("d", TensorProto.DOUBLE, [2])])
    m = _narrow(model)
    # the 32-bit forms a JAX user makes with x64 off, and numpy int64 arrays whose values fit
    c, d = m(jnp.asarray([1, 2]), np.array([3, -(2**31)], np.int64))
    assert c.dtype == jnp.int32 and d.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(c), [4, -(2**31) + 2])
    c, _ = jax.jit(m.apply)(m.params, jnp.asarray([1, 2]), jnp.asarray([3, 4]))
    np.testing.assert_array_equal(np.asarray(c), [4, 6])


def test_an_input_that_needs_64_bits_is_refused_naming_it() -> None:
    model = _model([helper.make_node("Add", ["a", "b"], ["c"])],
                   [_vi("a", TensorProto.INT64, [2]), _vi("b", TensorProto.INT64, [2])], [_vi("c", TensorProto.INT64, [2])])
    m = _narrow(model)
    with pytest.raises(NeedsX64InputError, match=r"input 'b' .*1099511627776.*jax_enable_x64") as info:
        m(np.array([1, 2], np.int64), np.array([2**40, 1], np.int64))
    assert isinstance(info.value, InputError) and isinstance(info.value, OnnxportError)
    f = helper.make_tensor_value_info
    fm = _model([helper.make_node("Mul", ["x", "x"], ["y"])], [f("x", TensorProto.DOUBLE, [1])], [f("y", TensorProto.DOUBLE, [1])])
    with pytest.raises(NeedsX64InputError, match=r"input 'x' .*overflows float32"):
        _narrow(fm)(np.array([1e300]))
    np.testing.assert_allclose(np.asarray(_narrow(fm)(np.array([3.0]))), [9.0])


def test_an_int64_constant_beyond_int32_used_as_data_is_refused_at_import() -> None:
    model = _model([helper.make_node("Add", ["a", "k"], ["c"])], [_vi("a", TensorProto.INT64, [2])],
                   [_vi("c", TensorProto.INT64, [2])], [_i64("k", [2**40, 1])])
    with pytest.raises(NeedsX64Error, match=r"constant 'k' .*1099511627776.*jax_enable_x64") as info:
        onnxport.import_model(model, backend="jax", x64=False)
    assert isinstance(info.value, OnnxportError)
    # the default import runs the model in its own 64-bit scope: exact
    out = onnxport.import_model(model, backend="jax")(jnp.asarray([1, 2]))
    np.testing.assert_array_equal(np.asarray(out), [2**40 + 1, 3])


def test_a_folded_constant_that_needs_64_bits_is_refused() -> None:
    # 2**20 * 2**20 folds (exactly, in 64 bits) to 2**40, which a runtime Add then reads
    model = _model([helper.make_node("Mul", ["k", "k"], ["kk"]), helper.make_node("Add", ["a", "kk"], ["c"])],
                   [_vi("a", TensorProto.INT64, [1])], [_vi("c", TensorProto.INT64, [1])], [_i64("k", [2**20])])
    with pytest.raises(NeedsX64Error, match=r"constant 'kk'"):
        onnxport.import_model(model, backend="jax", x64=False)


def test_a_float64_constant_that_float32_cannot_hold_is_refused() -> None:
    big = helper.make_tensor("big", TensorProto.DOUBLE, [1], [1e300])
    model = _model([helper.make_node("Mul", ["x", "big"], ["y"])], [_vi("x", TensorProto.DOUBLE, [1])],
                   [_vi("y", TensorProto.DOUBLE, [1])], [big])
    with pytest.raises(NeedsX64Error, match=r"'big' .*overflows float32"):
        onnxport.import_model(model, backend="jax", x64=False)
    tiny = helper.make_tensor("tiny", TensorProto.DOUBLE, [1], [1e-300])
    model = _model([helper.make_node("Add", ["x", "tiny"], ["y"])], [_vi("x", TensorProto.DOUBLE, [1])],
                   [_vi("y", TensorProto.DOUBLE, [1])], [tiny])
    with pytest.raises(NeedsX64Error, match=r"'tiny' .*rounds to zero"):
        onnxport.import_model(model, backend="jax", x64=False)


@pytest.mark.parametrize("starts,ends,steps,want", [
    ([1], [I64_MAX], [1], [1, 2, 3, 4]),  # "to the end"
    ([-1], [I64_MIN], [-1], [4, 3, 2, 1, 0]),  # "back to the start"
    ([I64_MIN], [3], [1], [0, 1, 2]),
])
def test_slice_bounds_beyond_int32_keep_working(starts, ends, steps, want) -> None:
    model = _model([helper.make_node("Slice", ["x", "s", "e", "ax", "st"], ["y"])], [_vi("x", TensorProto.INT64, [5])],
                   [_vi("y", TensorProto.INT64, [None])],
                   [_i64("s", starts), _i64("e", ends), _i64("ax", [0]), _i64("st", steps)])
    m = _narrow(model)
    x = jnp.arange(5)
    np.testing.assert_array_equal(np.asarray(m(x)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(m.apply)(m.params, x)), want)


def test_int64_clip_bounds_at_the_int64_limits_keep_working() -> None:
    model = _model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [_vi("x", TensorProto.INT64, [3])],
                   [_vi("y", TensorProto.INT64, [3])],
                   [helper.make_tensor("lo", TensorProto.INT64, [], [I64_MIN]), helper.make_tensor("hi", TensorProto.INT64, [], [I64_MAX])])
    out = _narrow(model)(jnp.asarray([-(2**31), 0, 2**31 - 1]))
    np.testing.assert_array_equal(np.asarray(out), [-(2**31), 0, 2**31 - 1])


def test_a_comparison_with_int64_max_is_data_and_refused() -> None:
    # Less(x, INT64_MAX) is true for every int32 x; clamped to INT32_MAX it would not be: no clamp
    model = _model([helper.make_node("Less", ["x", "m"], ["y"])], [_vi("x", TensorProto.INT64, [2])],
                   [_vi("y", TensorProto.BOOL, [2])], [_i64("m", [I64_MAX])])
    with pytest.raises(NeedsX64Error, match="constant 'm'"):
        onnxport.import_model(model, backend="jax", x64=False)


def test_shapes_computed_from_constants_stay_exact() -> None:
    # Shape -> Concat with INT64_MAX -> Slice end: folded in 64 bits, then clamped, never wrapped
    model = _model([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Concat", ["s", "big"], ["e"], axis=0),
                    helper.make_node("Slice", ["x", "zero", "e2"], ["y"]),
                    helper.make_node("Slice", ["e", "one", "two"], ["e2"])],
                   [_vi("x", TensorProto.FLOAT, [4])], [_vi("y", TensorProto.FLOAT, [4])],
                   [_i64("big", [I64_MAX]), _i64("zero", [0]), _i64("one", [1]), _i64("two", [2])])
    out = _narrow(model)(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 2, 3])


def test_bitcast_of_a_64_bit_type_is_refused() -> None:
    model = _model([helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT64)], [_vi("x", TensorProto.DOUBLE, [2])],
                   [_vi("y", TensorProto.INT64, [2])], opset=26)
    with pytest.raises(NeedsX64Error, match="BitCast"):
        onnxport.import_model(model, backend="jax", x64=False)
