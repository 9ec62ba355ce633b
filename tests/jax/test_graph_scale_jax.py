"""Long graphs in JAX: the import's direct device put of small weights makes the arrays
``jnp.asarray`` makes, a Concat of many operands joins them in groups and stays exact under
eager calls, ``jit``, ``grad`` and ``vmap``. (Times: benchmarks/bench_graph_scale.py.)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport.ir import filedata
from onnxport_jax import transfer
from onnxport_jax.ops.import_ import shape_ops


def _same_array(got, want) -> None:
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape and got.weak_type == want.weak_type
    assert got.sharding == want.sharding and got.committed == want.committed
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("arr", [
    np.arange(6, dtype=np.float32).reshape(2, 3), np.float16(1.5) * np.ones(3, np.float16),
    np.arange(4).astype(ml_dtypes.bfloat16), np.array([-3, 4], np.int8), np.array([True, False]),
    np.array(2.5, np.float32), np.zeros((0, 3), np.float32), np.arange(8, dtype=np.uint32),
], ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_transfer_makes_what_jnp_asarray_makes(arr: np.ndarray) -> None:
    put = transfer.Transfer()
    put(np.ones(2, np.float32))  # the first array goes the public way and sets the placement
    got = put(arr)
    assert put._direct, "the direct device put failed and fell back to jnp.asarray"
    _same_array(got, jnp.asarray(arr))


def test_transfer_copies_the_host_array() -> None:
    put = transfer.Transfer()
    put(np.ones(2, np.float32))
    arr = filedata.aligned_empty((16,), np.float32)  # memory XLA would adopt, were it not copied
    arr[:] = np.arange(16)
    got = put(arr)
    arr[:] = -1  # a later change to the caller's array does not reach the JAX array
    np.testing.assert_array_equal(np.asarray(got), np.arange(16, dtype=np.float32))


def test_transfer_leaves_64_bit_types_to_jax_s_own_canonicalization() -> None:
    arr = np.array([1, 2**40], np.int64)
    with jax.enable_x64(False):
        put = transfer.Transfer()
        put(np.ones(2, np.float32))
        got = put(np.array([1, 2], np.int64))
        assert got.dtype == jnp.asarray(np.array([1, 2], np.int64)).dtype == np.int32
    with jax.enable_x64(True):
        put = transfer.Transfer()
        put(np.ones(2, np.float32))
        got = put(arr)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(np.asarray(got), arr)


def test_transfer_gives_large_arrays_the_public_way(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(transfer, "_PUT", lambda *a, **k: calls.append(a))
    put = transfer.Transfer()
    put(np.ones(2, np.float32))
    big = np.ones(transfer.SMALL_BYTES // 4 + 1, np.float32)
    _same_array(put(big), jnp.asarray(big))
    _same_array(put(big, owned=True), jax.device_put(big))
    assert not calls


def test_transfer_falls_back_when_the_direct_put_fails(monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise TypeError("an internal signature that changed")

    monkeypatch.setattr(transfer, "_PUT", broken)
    put = transfer.Transfer()
    put(np.ones(2, np.float32))
    arr = np.arange(5, dtype=np.float32)
    _same_array(put(arr), jnp.asarray(arr))
    assert not put._direct


# -- many initializers and a wide Concat -----------------------------------------------------------
N = 3 * shape_ops.CONCAT_GROUP + 5  # three groups and a rest: two levels


def _concat_model(n: int = N):
    """x[n] + Concat(w0 ... w{n-1}) (one-element weights), and the weights."""
    ws = [np.array([i * 0.5 - 7], np.float32) for i in range(n)]
    inits = [numpy_helper.from_array(w, f"w{i}") for i, w in enumerate(ws)]
    nodes = [helper.make_node("Concat", [f"w{i}" for i in range(n)], ["c"], axis=0, name="cat"),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "concat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), np.concatenate(ws)


def test_many_weights_stay_named_trainable_arrays_and_a_wide_concat_is_exact() -> None:
    proto, cat = _concat_model()
    model = onnxport.import_model(proto, "jax")
    assert list(model.params) == [f"w{i}" for i in range(N)]
    assert all(isinstance(p, jax.Array) and p.shape == (1,) and p.dtype == np.float32 for p in model.params.values())
    x = np.linspace(-1, 1, N, dtype=np.float32)
    expected = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(np.asarray(model(x)), expected)
    np.testing.assert_array_equal(np.asarray(jax.jit(model.apply)(model.params, x)), x + cat)
    # each weight has its own gradient: d/dw_i sum(y * r) = r_i
    r = np.arange(N, dtype=np.float32)
    grads = jax.grad(lambda p: (model.apply(p, x) * r).sum())(model.params)
    assert set(grads) == set(model.params)
    np.testing.assert_array_equal(np.concatenate([np.asarray(grads[f"w{i}"]) for i in range(N)]), r)
    xs = np.stack([x, 2 * x])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda v: model.apply(model.params, v))(xs)), xs + cat)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_wide_concat_mixes_static_and_traced_operands(axis: int, monkeypatch) -> None:
    monkeypatch.setattr(shape_ops, "CONCAT_GROUP", 4)  # 70 operands: groups of groups of groups
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(70)]
    mixed = [x if i % 3 else jnp.asarray(x) for i, x in enumerate(xs)]  # numpy and JAX operands
    want = np.concatenate(xs, axis=axis)
    np.testing.assert_array_equal(np.asarray(shape_ops.concat(None, *mixed, axis=axis)), want)
    jitted = jax.jit(lambda *v: shape_ops.concat(None, *v, axis=axis))(*mixed)
    np.testing.assert_array_equal(np.asarray(jitted), want)
    # all static: folded with numpy at import time
    assert isinstance(shape_ops.concat(None, *xs, axis=axis), np.ndarray)


def test_wide_channels_last_concat_joins_the_channel_axis() -> None:
    rng = np.random.default_rng(1)
    xs = [jnp.asarray(rng.standard_normal((1, 2, 2, 1)).astype(np.float32)) for _ in range(shape_ops.CONCAT_GROUP + 1)]
    got = shape_ops.concat_nhwc(None, *xs, axis=1)
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([np.asarray(x) for x in xs], axis=3))
