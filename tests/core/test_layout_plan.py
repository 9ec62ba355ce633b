"""The channels-last plan (onnxport.importing.layout) on hand-built graphs, with no framework: which values
stay NHWC, where they convert back, which weights are read HWIO; and the registration of
channels-last variants (duplicates raise)."""

from __future__ import annotations

import functools
import sys

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxport.errors import RegistryError
from onnxport.importing import layout
from onnxport.importing.plan import ImportPlan
from onnxport.plugin.registry import Registry


def _w(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def _model(nodes, inputs, outputs, inits) -> ir.Model:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    proto = onnx.shape_inference.infer_shapes(proto)
    return ir.serde.deserialize_model(proto)


def _variant(name: str):
    def fn(ctx, *args, **kwargs):  # never called: the plan only chooses it
        raise AssertionError(name)

    fn.__name__ = fn.__qualname__ = name
    return fn


#: op type -> form -> the variant a fake backend declares
VARIANTS = {
    "Conv": {"": _variant("conv_nhwc"), "hwio": _variant("conv_nhwc_hwio")},
    "MaxPool": {"": _variant("max_pool_nhwc")},
    "GlobalAveragePool": {"": _variant("gap_nhwc")},
    "Reshape": {"shuffle": _variant("shuffle_nhwc")},
}


def _lookup(table):
    return lambda node: table.get(node.op_type, {})


def _tower() -> ir.Model:
    """Conv -> Relu -> MaxPool -> Add of a [C, 1, 1] bias -> grouped Conv -> GlobalAveragePool ->
    Flatten; the first Conv's output is also a graph output."""
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["p1", "bias"], ["a1"]),
        helper.make_node("Conv", ["a1", "w2"], ["c2"], group=2),
        helper.make_node("GlobalAveragePool", ["c2"], ["g1"]),
        helper.make_node("Flatten", ["g1"], ["y"]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
                   helper.make_tensor_value_info("c1", TensorProto.FLOAT, [1, 4, 8, 8])],
                  [_w("w1", 4, 3, 3, 3), _w("bias", 4, 1, 1), _w("w2", 4, 2, 1, 1)])


def _by_output(model: ir.Model) -> dict[str, ir.Node]:
    return {n.outputs[0].name: n for n in model.graph}


def test_a_conv_tower_stays_channels_last_until_a_layout_bound_op() -> None:
    model = _tower()
    g = model.graph
    n = _by_output(model)
    w1 = g.initializers["w1"]
    lp = layout.plan(list(g), list(g.outputs), _lookup(VARIANTS), params={w1, g.initializers["w2"]})
    assert {v.name for v in lp.nhwc} == {"c1", "r1", "p1", "a1", "c2", "g1"}
    # into NHWC once, at the data input of the first Conv; the bias operand of Add is brought along
    assert lp.convert[n["c1"]] == (layout.TO_LAST, None)
    assert lp.convert[n["a1"]] == (None, layout.TO_LAST)
    # back to NCHW where a layout-bound op reads it, and at the graph output that is NHWC
    assert lp.convert[n["y"]] == (layout.TO_FIRST,)
    assert lp.outputs == [None, layout.TO_FIRST]
    # the ungrouped Conv reads its weight HWIO, the grouped one keeps OIHW
    assert lp.hwio == {w1}
    assert lp.fns[n["c1"]] is VARIANTS["Conv"]["hwio"]
    assert lp.fns[n["c2"]] is VARIANTS["Conv"][""]
    assert lp.fns[n["p1"]] is VARIANTS["MaxPool"][""] and lp.fns[n["g1"]] is VARIANTS["GlobalAveragePool"][""]
    # layout-agnostic elementwise ops run their own primitive on NHWC data
    assert n["r1"] not in lp.fns and n["a1"] not in lp.fns


def test_an_op_without_a_declared_variant_runs_nchw() -> None:
    model = _tower()
    g = model.graph
    n = _by_output(model)
    table = {op: forms for op, forms in VARIANTS.items() if op != "MaxPool"}
    lp = layout.plan(list(g), list(g.outputs), _lookup(table))
    assert {v.name for v in lp.nhwc} == {"c1", "r1", "c2", "g1"}
    assert lp.convert[n["p1"]] == (layout.TO_FIRST,)
    assert n["p1"] not in lp.fns
    assert lp.convert[n["c2"]] == (layout.TO_LAST, None)  # the next Conv starts NHWC again
    assert lp.hwio == set()  # no param or 4-D constant was offered


def test_constant_weights_are_laid_out_and_shared_weights_are_not() -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c1"]), helper.make_node("Conv", ["c1", "w"], ["c2"]),
             helper.make_node("Conv", ["c2", "v"], ["y"]), helper.make_node("Shape", ["v"], ["s"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("s", TensorProto.INT64, None)],
                   [_w("w", 2, 2, 1, 1), _w("v", 2, 2, 1, 1)])
    g = model.graph
    w, v = g.initializers["w"], g.initializers["v"]
    static = {w: np.ones((2, 2, 1, 1), np.float32), v: np.ones((2, 2, 1, 1), np.float32)}
    lp = layout.plan(list(g), list(g.outputs), _lookup(VARIANTS), static=static)
    assert lp.hwio == {w}  # both readers of w are planned Convs; v is also read by Shape


def test_a_value_read_inside_a_subgraph_is_not_held_nhwc() -> None:
    then_g = helper.make_graph([helper.make_node("Neg", ["r1"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Abs", ["r1"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c1"]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4]),
                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [_w("w", 2, 2, 1, 1)])
    g = model.graph
    n = _by_output(model)
    lp = layout.plan(list(g), list(g.outputs), _lookup(VARIANTS))
    assert {v.name for v in lp.nhwc} == {"c1"}
    assert lp.convert[n["r1"]] == (layout.TO_FIRST,)


def test_a_channel_shuffle_runs_as_one_nhwc_step() -> None:
    inits = [_w("w", 6, 6, 1, 1), numpy_helper.from_array(np.array([1, 3, 2, 5, 5], np.int64), "split"),
             numpy_helper.from_array(np.array([1, 6, 5, 5], np.int64), "back")]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c1"]),
        helper.make_node("Reshape", ["c1", "split"], ["r1"]),
        helper.make_node("Transpose", ["r1"], ["t1"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t1", "back"], ["r2"]),
        helper.make_node("Conv", ["r2", "w"], ["y"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 5, 5])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 5, 5])], inits)
    g = model.graph
    n = _by_output(model)
    lp = layout.plan(list(g), list(g.outputs), _lookup(VARIANTS))
    shuffle = lp.fns[n["r1"]]
    assert isinstance(shuffle, functools.partial) and shuffle.func is VARIANTS["Reshape"]["shuffle"]
    assert shuffle.keywords == {"groups": 3}
    assert lp.fns[n["t1"]] is layout.passed_on and lp.fns[n["r2"]] is layout.passed_on
    assert not any(layout.TO_FIRST in c for c in lp.convert.values())
    # without the declared form, the Reshape reads NCHW
    lp = layout.plan(list(g), list(g.outputs), _lookup({"Conv": VARIANTS["Conv"]}))
    assert lp.convert[n["r1"]] == (layout.TO_FIRST, None)


def test_the_plan_reads_the_variants_registered_for_each_primitive() -> None:
    reg = Registry()
    conv, relu = _variant("conv"), _variant("relu")
    reg.add_import("fake", "Conv", conv, since=22)
    reg.add_import("fake", "Relu", relu, since=14)
    reg.add_import("fake", "Flatten", _variant("flatten"), since=21)
    nhwc = _variant("conv_nhwc")
    reg.add_layout_variant("fake", "Conv", nhwc, since=22)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c1"]), helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Flatten", ["r1"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [_w("w", 2, 2, 1, 1)])
    plan = ImportPlan(model, "fake", reg, {})

    class Step:
        def __init__(self, node):
            self.node, self.fn, self.convert = node, plan.info(node).primitive.fn, None

    class Program:
        steps = [Step(node) for node in model.graph]
        outputs = list(model.graph.outputs)

    program = Program()
    lp = layout.plan_program(plan, program)
    assert [s.fn for s in program.steps] == [nhwc, relu, plan.info(program.steps[2].node).primitive.fn]
    assert [s.convert for s in program.steps] == [(layout.TO_LAST, None), (None,), (layout.TO_FIRST,)]
    assert program.convert_out == [None] and program.hwio == set() and len(lp.nhwc) == 2


# -- registration -----------------------------------------------------------------------------
def test_a_second_channels_last_variant_for_the_same_primitive_raises() -> None:
    reg = Registry()
    reg.add_layout_variant("b", "Conv", _variant("a"), since=22)
    reg.add_layout_variant("b", "Conv", _variant("b"), since=22, form="hwio")  # another form
    reg.add_layout_variant("b", "Conv", _variant("c"), since=11)  # another version
    reg.add_layout_variant("other", "Conv", _variant("d"), since=22)  # another backend
    with pytest.raises(RegistryError, match="duplicate channels-last variant for ai.onnx::Conv since 22"):
        reg.add_layout_variant("b", "Conv", _variant("e"), since=22)
    with pytest.raises(RegistryError, match="unknown channels-last form"):
        reg.add_layout_variant("b", "Relu", _variant("f"), since=14, form="nchw")
    with pytest.raises(RegistryError, match="versions"):
        reg.add_layout_variant("b", "Relu", _variant("g"), since=12)


def test_declared_variants_are_discovered_with_their_primitive(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "fakelayoutops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "conv.py").write_text(
        "from onnxport import importer\n"
        "@importer('Conv', since=22)\n"
        "def conv(ctx, x, w, b=None, **attrs):\n    return x\n"
        "@conv.channels_last\n"
        "def conv_nhwc(ctx, x, w, b=None, **attrs):\n    return x\n"
        "@conv.channels_last(form='hwio')\n"
        "def conv_hwio(ctx, x, w, b=None, **attrs):\n    return x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    reg.discover("fakelayoutops", backend="fake")
    (prim,) = reg.imports("fake")
    mod = sys.modules["fakelayoutops.conv"]
    assert reg.layout_variants("fake", prim) == {"": mod.conv_nhwc, "hwio": mod.conv_hwio}
    # a second basic variant declared for the same primitive is refused at discovery
    (pkg / "twice.py").write_text(
        "from onnxport import importer\n"
        "@importer('Relu', since=14)\n"
        "def relu(ctx, x):\n    return x\n"
        "@relu.channels_last\n"
        "def relu_a(ctx, x):\n    return x\n"
        "@relu.channels_last\n"
        "def relu_b(ctx, x):\n    return x\n"
    )
    with pytest.raises(RegistryError, match=r"duplicate channels-last variant for ai.onnx::Relu since 14.*relu_a and .*relu_b"):
        Registry().discover("fakelayoutops", backend="fake2")
