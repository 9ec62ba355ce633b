"""Core numpy helpers of op families (signal windows, STFT framing, TfIdfVectorizer plan,
LabelEncoder table, tree depth, sequence positions, trainable initializers) against the ONNX
reference implementation or hand-derived values."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from onnxport.importing import program
from onnxport.opmath import mlops
from onnxport.opmath import sequence as seqs
from onnxport.opmath.signal import cosine_window, stft_frames
from onnxport.opmath.tfidf import string_pool, tfidf_plan


def _run_reference(node, inputs, outputs, feeds, domain_versions=(("", 22),)):
    graph = helper.make_graph([node], "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in domain_versions])
    return ReferenceEvaluator(model).run(None, feeds)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("size", [2, 8, 11])  # symmetric size 1 divides by zero in the reference
def test_cosine_window_matches_reference(op, periodic, size):
    node = helper.make_node(op, ["n"], ["w"], periodic=periodic, output_datatype=onnx.TensorProto.DOUBLE)
    (want,) = _run_reference(node, [helper.make_tensor_value_info("n", onnx.TensorProto.INT64, [])],
                             [helper.make_tensor_value_info("w", onnx.TensorProto.DOUBLE, None)],
                             {"n": np.array(size, np.int64)})
    np.testing.assert_allclose(cosine_window(op, size, periodic), want, rtol=1e-12, atol=1e-12)


def test_cosine_window_negative_size():
    with pytest.raises(ValueError, match="negative"):
        cosine_window("HannWindow", -1, 1)


def test_stft_frames():
    length, idx, valid = stft_frames(10, 3, 4, None, 1, False)
    assert length == 4
    np.testing.assert_array_equal(idx, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    assert valid.all()
    # a window wider than the frame reads past the signal: those samples are invalid (zero)
    length, idx, valid = stft_frames(8, 4, 4, 6, 1, False)
    assert length == 4 and idx.shape == (2, 6)
    np.testing.assert_array_equal(valid[1], [True, True, True, True, False, False])
    assert idx.max() == 7
    with pytest.raises(ValueError, match="onesided"):
        stft_frames(8, 4, 4, None, 1, True)
    with pytest.raises(ValueError, match="no frame"):
        stft_frames(3, 1, 4, None, 0, False)
    with pytest.raises(ValueError, match="positive"):
        stft_frames(8, 0, 4, None, 0, False)


def _numpy_tfidf(x, pool, **attrs):
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    plan = tfidf_plan(rows.shape[1], pool=pool, **attrs)
    counts = np.zeros((rows.shape[0], plan.size), np.float32)
    for ps in plan.passes:
        hits = np.all(rows[:, ps.window][:, :, None, :] == ps.grams[None, None], axis=-1)
        np.add.at(counts, (slice(None), ps.target), hits.sum(axis=1).astype(np.float32))
    mode = attrs["mode"]
    out = counts if mode == "TF" else (counts > 0) * plan.scale if mode == "IDF" else counts * plan.scale
    return out[0] if x.ndim == 1 else out


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("skip", [0, 2])
def test_tfidf_plan_matches_reference(mode, skip):
    x = np.array([[1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8], [8, 8, 7, 7, 6, 5, 1, 3, 1, 1, 3, 6]], np.int64)
    attrs = dict(max_gram_length=2, max_skip_count=skip, min_gram_length=1, mode=mode,
                 ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], weights=[1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.25])
    pool = np.array([2, 3, 5, 4, 5, 6, 7, 8, 6, 7], np.int64)
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], pool_int64s=pool.tolist(), **attrs)
    (want,) = _run_reference(node, [helper.make_tensor_value_info("x", onnx.TensorProto.INT64, x.shape)],
                             [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], {"x": x})
    np.testing.assert_allclose(_numpy_tfidf(x, pool, **attrs), want)


def test_tfidf_plan_errors_and_strings():
    with pytest.raises(ValueError, match="mode"):
        tfidf_plan(4, max_gram_length=1, max_skip_count=0, min_gram_length=1, mode="BM25", ngram_counts=[0],
                   ngram_indexes=[0], pool=np.array([1]), weights=None)
    with pytest.raises(ValueError, match="whole 2-grams"):
        tfidf_plan(4, max_gram_length=2, max_skip_count=0, min_gram_length=1, mode="TF", ngram_counts=[0, 1],
                   ngram_indexes=[0, 1], pool=np.array([1, 2, 3, 4]), weights=None)
    vocab, pool = string_pool(["a", "b", "a"])
    assert vocab == {"a": 0, "b": 1} and pool.tolist() == [0, 1, 0]


def _label_attrs(**given):
    attrs = {k: None for k in ("keys_tensor", "keys_int64s", "keys_floats", "keys_strings", "values_tensor",
                               "values_int64s", "values_floats", "values_strings", "default_tensor")}
    attrs.update(default_int64=-1, default_float=-0.0, default_string="_Unused")
    attrs.update(given)
    return attrs


def test_label_table():
    keys, values, dtype, default = mlops.label_table(_label_attrs(keys_strings=[b"a", b"b"], values_int64s=[1, 2],
                                                                  default_int64=7))
    assert keys == ["a", "b"] and values == [1, 2] and dtype == np.int64 and default == 7
    keys, values, dtype, default = mlops.label_table(
        _label_attrs(keys_tensor=np.array([1.5, 2.5]), values_tensor=np.array(["x", "y"])))
    assert keys == [1.5, 2.5] and values == ["x", "y"] and dtype == np.dtype(object) and default == "_Unused"
    with pytest.raises(ValueError, match="exactly one"):
        mlops.label_table(_label_attrs(keys_int64s=[1], keys_floats=[1.0], values_int64s=[2]))
    with pytest.raises(ValueError, match="2 keys but 1 values"):
        mlops.label_table(_label_attrs(keys_int64s=[1, 2], values_int64s=[2]))


def test_tree_depth():
    # root 0 -> (1, leaf); 1 -> (leaf, 2); 2 -> (leaf, leaf): three interior nodes deep
    assert mlops.tree_depth([0], [1, 0, 0], [0, 1, 1], [0, 2, 0], [1, 0, 1]) == 3
    assert mlops.tree_depth([], [], [], [], []) == 0
    with pytest.raises(ValueError, match="cycle"):
        mlops.tree_depth([0], [1, 0], [0, 0], [0, 0], [1, 1])
    with pytest.raises(ValueError, match="out of range"):
        mlops.tree_depth([0], [5], [0], [0], [1])


def test_sequence_semantics():
    assert seqs.position(-1, 3) == 2
    assert seqs.position(3, 3, insert=True) == 3
    with pytest.raises(ValueError, match="out of range"):
        seqs.position(3, 3)
    assert seqs.insert([1, 2], 9, 0) == [9, 1, 2] and seqs.insert([1, 2], 9) == [1, 2, 9]
    assert seqs.erase([1, 2, 3]) == [1, 2] and seqs.erase([1, 2, 3], -3) == [2, 3]
    with pytest.raises(ValueError, match="empty"):
        seqs.erase([])
    assert seqs.chunk_sizes(7, 3) == [3, 3, 1]
    assert seqs.map_sequence(lambda a, b: [a + b, a * b], [1, 2], [[10, 20]], 2) == [[11, 22], [10, 40]]
    assert seqs.map_sequence(lambda a, b: [a + b], [1, 2], [5], 1) == [[6, 7]]
    with pytest.raises(ValueError, match="differ in length"):
        seqs.map_sequence(lambda a, b: [a], [1, 2], [[1]], 1)


def test_trainable_initializers():
    def weight_of_matmul(arr):
        w = ir.Value(name="w", shape=ir.Shape(arr.shape), type=ir.TensorType(ir.DataType.FLOAT))
        x = ir.Value(name="x")
        ir.Node("", "MatMul", [x, w])
        return w

    w = weight_of_matmul(np.zeros((2, 2), np.float32))
    assert program.is_trainable(w, np.zeros((2, 2), np.float32), "auto")
    assert not program.is_trainable(w, np.zeros((2, 2), np.float32), "none")
    assert not program.is_trainable(w, np.zeros((2, 2), np.int64), "all")
    assert not program.is_trainable(w, np.zeros((), np.float32), "auto")  # a scalar stays a constant
    free = ir.Value(name="c")
    assert program.is_trainable(free, np.zeros((3,), np.float32), "all")
    assert program.foldable(ir.Node("", "Add", [])) and not program.foldable(ir.Node("", "RandomNormal", []))


@pytest.mark.parametrize("align_corners", [0, 1])
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [1, 1, 3, 2, 4]])  # no size-1 dim: see test below
def test_affine_base_matches_reference(align_corners, size):
    from onnxport.opmath.grid import affine_base

    r = len(size) - 2
    theta = np.random.default_rng(3).standard_normal((size[0], r, r + 1)).astype(np.float32)
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align_corners)
    (want,) = _run_reference(node, [helper.make_tensor_value_info("theta", onnx.TensorProto.FLOAT, theta.shape),
                                    helper.make_tensor_value_info("size", onnx.TensorProto.INT64, [len(size)])],
                             [helper.make_tensor_value_info("grid", onnx.TensorProto.FLOAT, None)],
                             {"theta": theta, "size": np.array(size, np.int64)})
    got = np.einsum("pk,nrk->npr", affine_base(size[2:], align_corners), theta).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_grid_coordinates():
    from onnxport.opmath.grid import cubic_weights, sample_bounds, unnormalize

    v = np.array([-1.0, 0.0, 1.0])
    np.testing.assert_allclose(unnormalize(v, 5, 1), [0, 2, 4])
    np.testing.assert_allclose(unnormalize(v, 5, 0), [-0.5, 2, 4.5])
    assert sample_bounds(5, 1) == (0.0, 4.0) and sample_bounds(5, 0) == (-0.5, 4.5)
    t = np.linspace(0, 0.99, 7)
    w = np.stack(cubic_weights(t))
    np.testing.assert_allclose(w.sum(axis=0), 1.0, atol=1e-12)  # a partition of unity
    np.testing.assert_allclose(w[:, 0], [0, 1, 0, 0], atol=1e-12)  # an integer coordinate reads one tap


def test_affine_base_size_one_axis():
    """A size-1 axis with align_corners sits at 0 (the reference divides by zero there; onnxruntime
    differs too: measured, left as the backends had it)."""
    from onnxport.opmath.grid import affine_base

    np.testing.assert_array_equal(affine_base([1, 2], 1), [[-1, 0, 1], [1, 0, 1]])


def test_onnx_slice_matches_onnxruntime():
    """(The reference implementation slices with numpy and gets clamped negative steps wrong.)"""
    import onnxruntime as ort

    from onnxport.opmath.slicing import onnx_slice

    x = np.arange(7, dtype=np.float32)
    node = helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])
    infos = [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [7])] + [
        helper.make_tensor_value_info(n, onnx.TensorProto.INT64, [1]) for n in "seat"]
    graph = helper.make_graph([node], "g", infos, [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    big = 2**62
    for start in (-big, -9, -3, 0, 2, 6, 9, big):
        for end in (-big, -8, -1, 0, 3, 7, big):
            for step in (-3, -1, 1, 2):
                feeds = {"x": x, "s": np.array([start]), "e": np.array([end]), "a": np.array([0]),
                         "t": np.array([step])}
                (want,) = sess.run(None, feeds)
                np.testing.assert_array_equal(x[onnx_slice(7, start, end, step)], want,
                                              err_msg=f"start={start} end={end} step={step}")


def test_even_split_matches_reference():
    from onnxport.opmath.slicing import even_split

    for dim, n in ((7, 3), (6, 3), (5, 4), (1, 1), (8, 5)):
        x = np.arange(dim, dtype=np.float32)
        outs = [f"y{i}" for i in range(n)]
        node = helper.make_node("Split", ["x"], outs, axis=0, num_outputs=n)
        want = _run_reference(node, [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [dim])],
                              [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outs],
                              {"x": x}, (("", 18),))
        assert even_split(dim, n) == [len(w) for w in want]
    with pytest.raises(ValueError, match="pieces"):
        even_split(4, 0)


@pytest.mark.parametrize("attrs", [{}, {"strides": [2, 1], "pads": [1, 0, 1, 1]}, {"dilations": [1, 2]}], ids=str)
def test_col2im_targets_match_reference(attrs):
    from onnxport.opmath.col2im import col2im_targets

    image, block = [5, 6], [2, 3]
    st, dl, pd = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1]), attrs.get("pads", [0, 0, 0, 0])
    nblocks = [(image[i] + pd[i] + pd[2 + i] - dl[i] * (block[i] - 1) - 1) // st[i] + 1 for i in range(2)]
    length, kprod, c = int(np.prod(nblocks)), int(np.prod(block)), 2
    x = np.random.default_rng(4).standard_normal((1, c * kprod, length)).astype(np.float32)
    node = helper.make_node("Col2Im", ["x", "i", "b"], ["y"], **attrs)
    (want,) = _run_reference(node, [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape),
                                    helper.make_tensor_value_info("i", onnx.TensorProto.INT64, [2]),
                                    helper.make_tensor_value_info("b", onnx.TensorProto.INT64, [2])],
                             [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                             {"x": x, "i": np.array(image), "b": np.array(block)}, (("", 18),))
    flat = col2im_targets(image, block, attrs.get("dilations"), attrs.get("strides"), attrs.get("pads"), length)
    out = np.zeros((1, c, int(np.prod(image)) + 1), np.float64)
    np.add.at(out, (slice(None), slice(None), flat.reshape(-1)), x.reshape(1, c, kprod * length))
    np.testing.assert_allclose(out[:, :, :-1].reshape(want.shape), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="blocks"):
        col2im_targets(image, block, attrs.get("dilations"), attrs.get("strides"), attrs.get("pads"), length + 1)
