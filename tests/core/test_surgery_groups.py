"""Size groups on small hand-built graphs: what ties channels, what fixes them, how errors read."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from onnxport import OnnxportError
from onnxport.edit.surgery import SizeAlignmentError, channel_scores, prune_channels, size_groups

from ..conftest import make_model, tensor_info
from .test_surgery_prune import run


def _w(name: str, *shape: int, seed: int = 0) -> onnx.TensorProto:
    return numpy_helper.from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), name)


def _i64(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def conv_chain(middle: list[onnx.NodeProto], mid_out: str, extra=(), c2_in: int = 6) -> onnx.ModelProto:
    """x -> conv1 (6 ch) -> [middle] -> conv2 -> y."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], name="conv1", pads=[1, 1, 1, 1]),
             *middle,
             helper.make_node("Conv", [mid_out, "w2"], ["y"], name="conv2")]
    inits = [_w("w1", 6, 3, 3, 3), _w("b1", 6), _w("w2", 4, c2_in, 1, 1), *extra]
    return make_model(nodes, [tensor_info("x", [1, 3, 5, 5])], [tensor_info("y", None)], inits, opset=17)


def test_print_names_layers_sizes_and_fixed_groups() -> None:
    model = conv_chain([helper.make_node("Relu", ["h"], ["r"], name="relu")], "r")
    groups = size_groups(model)
    text = str(groups)
    assert "conv1" in text and "read by: conv2" in text and "6 ch" in text
    assert "fixed: it reaches graph output 'y'" in text
    assert groups["conv1"].size == 6 and groups["conv1"].prunable
    assert groups["r"] is groups["conv1"]
    assert not groups["conv2"].prunable
    assert repr(groups).startswith("<SizeGroups: ")


def test_residual_add_ties_groups_and_is_scored_over_members() -> None:
    nodes = [helper.make_node("Conv", ["h", "wa"], ["a"], name="conva"),
             helper.make_node("Add", ["h", "a"], ["s"], name="add")]
    model = conv_chain(nodes, "s", [_w("wa", 6, 6, 1, 1, seed=3)])
    groups = size_groups(model)
    assert groups["conv1"] is groups["conva"] is groups["s"]
    assert sorted(groups["add"].producers) == ["conv1", "conva"]
    scores = channel_scores(groups)[groups["conv1"].id]
    w1 = numpy_helper.to_array(model.graph.initializer[0])
    assert scores.shape == (6,) and scores[0] > np.abs(w1[0]).mean()  # conva and the bias add to it
    pruned = prune_channels(model, keep={"conva": [0, 2, 4]})
    shapes = {k: v.const_value.shape for k, v in pruned.graph.initializers.items()}
    assert shapes["w1"] == (3, 3, 3, 3) and shapes["wa"] == (3, 3, 1, 1) and shapes["w2"] == (4, 3, 1, 1)


def test_concat_offsets_follow() -> None:
    nodes = [helper.make_node("Conv", ["x", "wb"], ["b"], name="convb", pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["h", "b"], ["c"], name="cat", axis=1)]
    model = conv_chain(nodes, "c", [_w("wb", 2, 3, 3, 3, seed=5)], c2_in=8)
    w2 = numpy_helper.to_array(model.graph.initializer[2])
    pruned = prune_channels(model, keep={"convb": [1]})
    got = pruned.graph.initializers["w2"].const_value.numpy()
    np.testing.assert_array_equal(got, w2[:, [0, 1, 2, 3, 4, 5, 7]])
    pruned = prune_channels(model, keep={"conv1": [5]})
    np.testing.assert_array_equal(pruned.graph.initializers["w2"].const_value.numpy(), w2[:, [5, 6, 7]])


def test_split_and_slice_on_channels_are_rewritten() -> None:
    nodes = [helper.make_node("Conv", ["x", "wb"], ["b"], name="convb", pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["h", "b"], ["c"], name="cat", axis=1),
             helper.make_node("Split", ["c", "sp"], ["s1", "s2"], name="split", axis=1),
             helper.make_node("Slice", ["c", "st", "en", "ax"], ["sl"], name="slice"),
             helper.make_node("Add", ["s1", "sl"], ["m"], name="add")]
    extra = [_w("wb", 2, 3, 3, 3, seed=5), _i64("sp", [6, 2]), _i64("st", [0]), _i64("en", [6]), _i64("ax", [1])]
    model = conv_chain(nodes, "m", extra)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    pruned = prune_channels(model, keep={"conv1": [0, 3]})
    inits = {k: v.const_value.numpy() for k, v in pruned.graph.initializers.items()}
    assert inits["sp"].tolist() == [2, 2] and inits["en"].tolist() == [2]
    assert run(pruned, x).shape == (1, 4, 5, 5)
    divided = conv_chain([helper.make_node("Split", ["h", "sp"], ["s1", "s2"], name="split", axis=1)], "s1",
                         [_i64("sp", [4, 2])], c2_in=4)
    groups = size_groups(divided)  # the Split divides conv1's channels into two groups
    assert [g.size for g in groups if "conv1" in g.name] == [4, 2]
    pruned = prune_channels(divided, keep={"conv1": [0, 1, 5]})
    assert pruned.graph.initializers["sp"].const_value.numpy().tolist() == [2, 1]
    with pytest.raises(SizeAlignmentError, match="keeps no channel of group"):
        prune_channels(divided, keep={"conv1": [0, 1]})


def test_flatten_into_linear_prunes_spatial_blocks() -> None:
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], name="conv1"),
             helper.make_node("Flatten", ["h"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc", transB=1)]
    inits = [_w("w1", 4, 3, 2, 2), _w("fc", 5, 4 * 4 * 4)]
    model = make_model(nodes, [tensor_info("x", [2, 3, 5, 5])], [tensor_info("y", None)], inits, opset=17)
    pruned = prune_channels(model, keep={"conv1": [1, 3]})
    fc = numpy_helper.to_array(inits[1])
    np.testing.assert_array_equal(pruned.graph.initializers["fc"].const_value.numpy(),
                                  fc[:, np.r_[16:32, 48:64]])


def test_runtime_reshape_raises_naming_the_node() -> None:
    nodes = [helper.make_node("Shape", ["h"], ["shp"], name="shape"),
             helper.make_node("Reshape", ["h", "shp"], ["r"], name="dyn_reshape")]
    model = conv_chain(nodes, "r")
    groups = size_groups(model)
    assert "dyn_reshape" in groups["conv1"].fixed
    with pytest.raises(SizeAlignmentError, match="dyn_reshape.*computed at run time") as err:
        prune_channels(model, keep={"conv1": [0, 1]})
    assert isinstance(err.value, OnnxportError)


def test_gather_on_channels_raises_naming_the_node() -> None:
    nodes = [helper.make_node("Gather", ["h", "idx"], ["g"], name="pick", axis=1)]
    model = conv_chain(nodes, "g", [_i64("idx", [0, 1, 2, 3, 4, 5])])
    with pytest.raises(SizeAlignmentError, match="pick.*picks channels by index"):
        prune_channels(model, fraction=0.5) if size_groups(model)["conv1"].prunable else prune_channels(
            model, keep={"conv1": [0]})


def test_keep_is_checked() -> None:
    model = conv_chain([], "h")
    for keep, message in (({"conv1": []}, "keeps no channel"), ({"conv1": [0, 0]}, "repeats"),
                          ({"conv1": [6]}, "outside"), ({"nowhere": [0]}, "no node or value named"),
                          ({"conv2": [0]}, "graph output")):
        with pytest.raises(SizeAlignmentError, match=message):
            prune_channels(model, keep=keep)
    with pytest.raises(SizeAlignmentError, match="either"):
        prune_channels(model)


def test_global_prune_keeps_one_channel_per_group_and_removes_the_fraction() -> None:
    nodes = [helper.make_node("Conv", ["h", "wa"], ["a"], name="conva"),
             helper.make_node("Relu", ["a"], ["r"], name="relu")]
    wa = np.random.default_rng(1).standard_normal((6, 6, 1, 1)).astype(np.float32)
    wa[1:] *= 1e-3  # conva's channels all but one look worthless, globally
    model = conv_chain(nodes, "r", [numpy_helper.from_array(wa, "wa")])
    pruned = prune_channels(model, fraction=0.5, per="global")
    sizes = {g.name: g.size for g in size_groups(pruned)}
    assert sizes["conva"] == 1 and sizes["conv1"] == 5  # 6 of 12 channels go, the worthless first
    layer = {g.name: g.size for g in size_groups(prune_channels(model, fraction=0.5, per="layer"))}
    assert layer["conva"] == 3 and layer["conv1"] == 3


def test_accepts_every_model_form(tmp_path) -> None:
    model = conv_chain([], "h")
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    for form in (model, model.SerializeToString(), str(path), ir.serde.deserialize_model(model)):
        out = prune_channels(form, keep={"conv1": [0, 1, 2]})
        assert isinstance(out, ir.Model)
        assert [n.name for n in out.graph] == ["conv1", "conv2"]


def test_multiple_of_rounds_kept_channels_up() -> None:
    nodes = [helper.make_node("Conv", ["h", "wa"], ["a"], name="conva"),
             helper.make_node("Relu", ["a"], ["r"], name="relu")]
    model = conv_chain(nodes, "r", [_w("wa", 6, 6, 1, 1, seed=3)])
    sizes = {g.name: g.size for g in size_groups(prune_channels(model, fraction=0.7, multiple_of=4))}
    assert sizes["conv1"] == 4 and sizes["conva"] == 4  # 6 - 4 = 2 kept, rounded up to 4
    sizes = {g.name: g.size for g in size_groups(prune_channels(model, fraction=0.5, multiple_of=8))}
    assert sizes["conv1"] == 6  # rounding up reaches the full size: not pruned


def test_conv_transpose_instance_norm_prelu_depthwise() -> None:
    from .test_surgery_prune import kill_channels

    nodes = [helper.make_node("ConvTranspose", ["x", "wt", "bt"], ["t"], name="up", strides=[2, 2]),
             helper.make_node("InstanceNormalization", ["t", "s", "b"], ["n"], name="inorm"),
             helper.make_node("PRelu", ["n", "slope"], ["p"], name="prelu"),
             helper.make_node("Conv", ["p", "wd"], ["d"], name="dw", group=6, pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["d", "w2"], ["y"], name="conv2")]
    inits = [_w("wt", 3, 6, 2, 2), _w("bt", 6), _w("s", 6), _w("b", 6), _w("slope", 6, 1, 1),
             _w("wd", 6, 1, 3, 3), _w("w2", 4, 6, 1, 1)]
    model = make_model(nodes, [tensor_info("x", [1, 3, 4, 4])], [tensor_info("y", None)], inits, opset=17)
    groups = size_groups(model)
    assert groups["up"] is groups["dw"] and groups["up"].size == 6
    killed, keep = kill_channels(model.SerializeToString(), 0.5)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    pruned = prune_channels(killed, keep=keep)
    np.testing.assert_allclose(run(pruned, x), run(killed, x), rtol=1e-4, atol=1e-5)
    shapes = {k: v.const_value.shape for k, v in pruned.graph.initializers.items()}
    assert shapes["wt"] == (3, 3, 2, 2) and shapes["slope"] == (3, 1, 1) and shapes["wd"] == (3, 1, 3, 3)
    assert [n for n in pruned.graph if n.name == "dw"][0].attributes["group"].value == 3


def test_grouped_conv_prunes_the_same_local_channels_in_every_group() -> None:
    from .test_surgery_prune import kill_channels

    # conv1: 8 channels -> grouped conv (group=2, 4 in / 6 out per group) -> ConvTranspose (group=2) -> conv3
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "wg", "bg"], ["gc"], name="grouped", group=2, pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["gc", "wt"], ["t"], name="up", group=2, strides=[2, 2]),
             helper.make_node("Conv", ["t", "w3"], ["y"], name="conv3")]
    inits = [_w("w1", 8, 3, 3, 3), _w("b1", 8), _w("wg", 12, 4, 3, 3, seed=1), _w("bg", 12, seed=2),
             _w("wt", 12, 5, 2, 2, seed=3), _w("w3", 4, 10, 1, 1, seed=4)]
    model = make_model(nodes, [tensor_info("x", [1, 3, 5, 5])], [tensor_info("y", None)], inits, opset=17)
    groups = size_groups(model)
    assert groups["conv1"].size == 4 and groups["grouped"].size == 6 and groups["up"].size == 5
    assert groups["conv1"].prunable and groups["grouped"].prunable and groups["up"].prunable
    killed, keep = kill_channels(model.SerializeToString(), 0.5)
    pruned = prune_channels(killed, keep=keep)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(run(pruned, x), run(killed, x), rtol=1e-4, atol=1e-5)
    shapes = {k: v.const_value.shape for k, v in pruned.graph.initializers.items()}
    assert shapes["w1"] == (4, 3, 3, 3) and shapes["wg"] == (6, 2, 3, 3) and shapes["bg"] == (6,)
    assert shapes["wt"] == (6, 3, 2, 2) and shapes["w3"] == (4, 6, 1, 1)
    assert [n for n in pruned.graph if n.name == "grouped"][0].attributes["group"].value == 2
    onnx.checker.check_model(ir.serde.serialize_model(pruned), full_check=True)
    # widening a grouped layer adds the new channels to every group (sizes are per group)
    from onnxport.edit.surgery import widen_channels

    wide = widen_channels(model, "grouped", 8)
    shapes = {k: v.const_value.shape for k, v in wide.graph.initializers.items()}
    assert shapes["wg"] == (16, 4, 3, 3) and shapes["wt"] == (16, 5, 2, 2)
    np.testing.assert_allclose(run(wide, x), run(model, x), rtol=1e-5, atol=1e-5)


def test_grouped_conv_with_one_channel_per_group_stays_fixed() -> None:
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], name="conv1"),
             helper.make_node("Conv", ["h", "wg"], ["y0"], name="mult", group=4),
             helper.make_node("Conv", ["y0", "w2"], ["y"], name="conv2")]
    inits = [_w("w1", 4, 3, 1, 1), _w("wg", 8, 1, 1, 1), _w("w2", 2, 8, 1, 1)]
    model = make_model(nodes, [tensor_info("x", [1, 3, 5, 5])], [tensor_info("y", None)], inits, opset=17)
    groups = size_groups(model)
    assert "grouped convolution" in (groups["conv1"].fixed or "")


def _group_norm(x: np.ndarray, g: int, scale: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    xg = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + eps)
    return xg.reshape(x.shape) * scale.reshape(1, c, 1, 1) + bias.reshape(1, c, 1, 1)


def test_group_norm_and_lrn_follow_the_pruned_channels() -> None:
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("GroupNormalization", ["h", "s", "b"], ["n"], name="gnorm", num_groups=2),
             helper.make_node("LRN", ["n"], ["l"], name="lrn", size=3),
             helper.make_node("Conv", ["l", "w2"], ["y"], name="conv2")]
    w1, s, b, w2 = (np.random.default_rng(i).standard_normal(shape).astype(np.float32)
                    for i, shape in enumerate([(8, 3, 3, 3), (8,), (8,), (4, 8, 1, 1)]))
    inits = [numpy_helper.from_array(a, k) for a, k in ((w1, "w1"), (s, "s"), (b, "b"), (w2, "w2"))]
    model = make_model(nodes, [tensor_info("x", [2, 3, 5, 5])], [tensor_info("y", [2, 4, 5, 5])], inits, opset=21)
    groups = size_groups(model)
    g = groups["conv1"]
    assert g.size == 4 and g.prunable and "gnorm" in " ".join(g.mixes) and "lrn" in " ".join(g.mixes)
    pruned = prune_channels(model, keep={"conv1": [0, 2, 3]})
    shapes = {k: v.const_value.shape for k, v in pruned.graph.initializers.items()}
    assert shapes["w1"] == (6, 3, 3, 3) and shapes["s"] == (6,) and shapes["w2"] == (4, 6, 1, 1)
    # numpy reference of the pruned network: the same local channels kept in both groups
    kept = np.array([0, 2, 3, 4, 6, 7])
    x = np.random.default_rng(9).standard_normal((2, 3, 5, 5)).astype(np.float32)
    sess = ort.InferenceSession(
        make_model(nodes[:1], [tensor_info("x", [2, 3, 5, 5])], [tensor_info("h", [2, 6, 5, 5])],
                   [numpy_helper.from_array(w1[kept], "w1")], opset=21).SerializeToString(),
        providers=["CPUExecutionProvider"])
    h = sess.run(None, {"x": x})[0]
    n = _group_norm(h, 2, s[kept], b[kept])
    sq = np.pad(n ** 2, ((0, 0), (1, 1), (0, 0), (0, 0)))
    lrn = n / (1.0 + 1e-4 / 3 * (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:])) ** 0.75
    expected = np.einsum("oc,nchw->nohw", w2[:, kept, 0, 0], lrn)
    np.testing.assert_allclose(run(pruned, x), expected, rtol=1e-4, atol=1e-4)
