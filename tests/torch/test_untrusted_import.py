"""Untrusted models through the torch importer: hostile names run, bombs and bad shapes fail cleanly."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport.errors import ConversionError

from .._hostile import BOMB_OPS, BUDGET, bomb_model, inconsistent_matmul
from ..conftest import make_model, tensor_info

HOSTILE = ["in'put\n(1)", 'x"); import os; os.system("echo pwned") #', "class", "def", "lambda", "1abc", "self",
           "training", "forward", "_parameters", "a.b", "a_b", "match", "__init__", "é名"]


def test_names_full_of_quotes_newlines_parentheses_and_keywords_become_safe_and_run():
    """Every name (inputs, weights, nodes, outputs) is hostile; the generated forward() still runs."""
    nodes, inputs, inits = [], [], []
    prev = None
    rng = np.random.default_rng(0)
    expected = None
    feeds = []
    for i, name in enumerate(HOSTILE):
        inputs.append(tensor_info(f"{name}", [2]))
        inits.append(numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), f"{name} w"))
        out = f"{name}) out{i}"
        a = name if prev is None else prev
        nodes.append(helper.make_node("Add", [a, f"{name} w"], [f"{out}_s"], name=f"{name}\nnode'{i}"))
        nodes.append(helper.make_node("Mul", [f"{out}_s", name], [out], name=name))
        x = rng.standard_normal(2).astype(np.float32)
        feeds.append(x)
        w = onnx.numpy_helper.to_array(inits[-1])
        expected = (x if expected is None else expected) + w
        expected = expected * x
        prev = out
    model = make_model(nodes, inputs, [tensor_info(prev, [2])], inits)
    module = onnxport.import_model(model)
    got = module(*[torch.from_numpy(x) for x in feeds])
    np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-5)
    import keyword

    args = module.code.split("def forward(")[1].split(")")[0].split(", ")
    assert all(a.isidentifier() and not keyword.iskeyword(a) for a in args) and len(set(args)) == len(args)
    compile(module.code, "<check>", "exec")  # the source is valid Python
    # by name too (an input called "self" is the one Python cannot take as a keyword: passed by position)
    by_name = module(*[torch.from_numpy(x) for x in feeds[:7]],
                     **{n: torch.from_numpy(x) for n, x in list(zip(HOSTILE, feeds))[7:]})
    torch.testing.assert_close(by_name, got)
    assert set(module.initializer_keys) == {f"{n} w" for n in HOSTILE}


def test_names_that_sanitize_alike_stay_distinct():
    model = make_model([helper.make_node("Sub", ["a.b", "a_b"], ["y"])],
                       [tensor_info("a.b", [2]), tensor_info("a_b", [2])], [tensor_info("y", [2])])
    module = onnxport.import_model(model)
    one, zero = torch.ones(2), torch.zeros(2)
    torch.testing.assert_close(module(one, zero), one)
    torch.testing.assert_close(module(**{"a.b": one, "a_b": zero}), one)
    torch.testing.assert_close(module(**{"a_b": zero, "a.b": one}), one)


def test_inconsistent_shapes_fail_at_call_time_as_conversion_error_naming_the_node():
    module = onnxport.import_model(inconsistent_matmul())
    with pytest.raises(ConversionError, match=r"'proj' \(ai.onnx::MatMul\)"):
        module(torch.ones(8, 2))


@pytest.mark.parametrize("op", BOMB_OPS)
def test_folding_bombs_are_sized_before_computing(op, monkeypatch):
    """A 300-byte model asking for a 16 GB constant imports at once and refuses to run it."""
    monkeypatch.setenv("ONNXPORT_MAX_ELEMENTS", str(BUDGET))
    module = onnxport.import_model(bomb_model(op))  # computing the bomb here would exhaust memory
    if op == "Expand":
        return  # a broadcast view: torch allocates nothing, the sum streams
    with pytest.raises(ConversionError, match=r"'bomb'.*elements, more than"):
        module()


def test_a_lying_value_info_of_a_constant_never_casts():
    c = numpy_helper.from_array(np.array([0.5, 2.0, 1.0], np.float32), "cv")
    model = make_model([helper.make_node("Constant", [], ["c"], name="c", value=c),
                        helper.make_node("Add", ["x", "c"], ["y"], name="add")],
                       [tensor_info("x", [3])], [tensor_info("y", [3])])
    model.graph.value_info.append(tensor_info("c", [3], TensorProto.INT64))
    with pytest.warns(UserWarning, match="contradicts"):  # onnxruntime runs it: the constant's type wins
        module = onnxport.import_model(model)
    np.testing.assert_array_equal(module(torch.zeros(3)).detach().numpy(), [0.5, 2.0, 1.0])  # never cast


def test_import_of_our_own_load_with_external_data(tmp_path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [tensor_info("x", [1, 2])],
                       [tensor_info("y", [1, 3])], [numpy_helper.from_array(w, "w")])
    onnxport.save(onnxport.load(model), tmp_path / "m.onnx", external_data=True)
    module = onnxport.import_model(onnxport.load(tmp_path / "m.onnx"))
    np.testing.assert_array_equal(module(torch.ones(1, 2)).detach().numpy(), np.ones((1, 2)) @ w)
