"""The core export pipeline (``onnxport.exporting.pipeline``) on graphs built with the core ``Builder`` alone,
as a second exporter (JAX, TensorFlow) would call it: no framework involved."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

import onnxport
from onnxport.errors import ConversionError, RegistryError
from onnxport.exporting import builder as build
from onnxport.exporting import pipeline as ex
from onnxport.exporting.builder import Builder
from onnxport.plugin.registry import Registry


def _run(model: ir.Model, *args: np.ndarray) -> list[np.ndarray]:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, args)))


def _reduce_model(opset: int) -> tuple[ir.Model, Builder]:
    """x -> ReduceMean(x, axes=[1]) (newest form: axes as an input) -> Relu, with a foldable Add."""
    g = Builder(ex.choose_opset(opset), name="m")
    x = g.input("x", ir.DataType.FLOAT, ["batch", 4])
    axes = g.op("Add", g.const(np.asarray([0], dtype=np.int64)), g.const(np.asarray([1], dtype=np.int64)))
    with g.scope("block/mean", ex.scope_metadata(["", "block"], ["Root", "Block"])):
        m = g.op("ReduceMean", x, axes, keepdims=0)
    y = g.op("Relu", m)
    m.dtype = y.dtype = ir.DataType.FLOAT
    m.shape = y.shape = ir.Shape(["batch"])
    g.output(y, "y")
    return g.model(producer="onnxport-test"), g


def test_choose_opset_range():
    assert ex.choose_opset(None) == ex.DEFAULT_OPSET
    assert ex.choose_opset(ex.MIN_OPSET) == ex.MIN_OPSET
    for bad in (ex.MIN_OPSET - 1, 10_000):
        with pytest.raises(ConversionError, match="outside the supported range"):
            ex.choose_opset(bad)


@pytest.mark.parametrize("opset", [13, 18])
def test_finish_optimizes_downconverts_and_checks(opset):
    model, _ = _reduce_model(opset)
    out = ex.finish(model, ex.ExportOptions(opset=opset, output_names=["mean_out"]), backend="mine",
                    targets=["mine.mean", "mine.relu", "mine.mean"])
    ops = [n.op_type for n in out.graph]
    assert "Add" not in ops, "the constant Add folds"
    mean = next(n for n in out.graph if n.op_type == "ReduceMean")
    if opset < 18:
        assert "axes" in mean.attributes and len(mean.inputs) == 1, "ReduceMean was not down-converted"
    else:
        assert len(mean.inputs) == 2
    assert out.meta[ex.targets_key("mine")] == ["mine.mean", "mine.relu"]
    assert [v.name for v in out.graph.outputs] == ["mean_out"]
    assert json.loads(mean.metadata_props[ex.NAME_SCOPES_KEY]) == ["", "block"]
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    (y,) = _run(out, x)
    np.testing.assert_allclose(y, np.maximum(x.mean(axis=1), 0), rtol=1e-6)


def test_finish_without_optimize_keeps_nodes():
    model, _ = _reduce_model(18)
    out = ex.finish(model, ex.ExportOptions(optimize=False), backend="mine")
    assert "Add" in [n.op_type for n in out.graph]


def test_check_opset_names_missing_ops():
    g = Builder(13, name="m")
    x = g.input("x", ir.DataType.FLOAT, [2, 3])
    g.output(g.op("Mish", x))  # Mish is defined from opset 18, no down-adapter
    with pytest.raises(ConversionError, match="Mish"):
        ex.finish(g.model(), ex.ExportOptions(opset=13), backend="mine")


def test_check_opset_checks_each_nodes_form_against_the_target_schema():
    """An op that exists at the target opset in another form (a missing down-adapter) is refused,
    naming the node and what does not fit; a node that fits passes."""
    def one(opset: int, op: str, n_inputs: int = 1, **attrs) -> ir.Model:
        g = Builder(opset, name="m")
        x = g.input("x", ir.DataType.FLOAT, [2, 3])
        extra = [g.const(np.asarray([1], dtype=np.int64))] * (n_inputs - 1)
        g.output(g.op(op, x, *extra, **attrs))
        model = g.model()
        next(n for n in model.graph if n.op_type == op).name = "the_node"
        return model

    build.check_opset(one(18, "ReduceMean", 2, keepdims=0))  # 18: axes is an input
    build.check_opset(one(13, "ReduceMean", 1, axes=[1]))  # 13: axes is an attribute
    with pytest.raises(ConversionError, match=r"'the_node' \(ReduceMean, schema ReduceMean-13 at opset 13\): 2 inputs"):
        build.check_opset(one(13, "ReduceMean", 2))
    with pytest.raises(ConversionError, match=r"'the_node'.*attribute 'axes', which the schema does not define"):
        build.check_opset(one(18, "ReduceMean", 1, axes=[1]))
    with pytest.raises(ConversionError, match=r"'the_node'.*attribute 'axes' is INT; the schema says INTS"):
        build.check_opset(one(13, "ReduceMean", 1, axes=1))
    with pytest.raises(ConversionError, match=r"'the_node'.*lacks the required attribute 'to'"):
        build.check_opset(one(13, "Cast"))
    with pytest.raises(ConversionError, match=r"'the_node'.*1 inputs; the schema takes 2"):
        build.check_opset(one(13, "Mod"))


def test_down_adapters_come_from_the_registry():
    reg = onnxport.plugin.registry()
    assert {r.op_type for r in reg.down_adapters()} >= {"ReduceMean", "LayerNormalization", "Gelu"}
    empty = Registry()
    model, _ = _reduce_model(13)
    with pytest.raises(ConversionError, match=r"ReduceMean.*ReduceMean-13 at opset 13\): 2 inputs; the schema takes 1"):
        ex.finish(model, ex.ExportOptions(opset=13, optimize=True), backend="mine", registry=empty)
    mean = next(n for n in model.graph if n.op_type == "ReduceMean")
    assert len(mean.inputs) == 2, "an empty registry has no down-adapter: the node stays as built (and is refused)"
    assert ex.downgrade(model, reg) == 1
    mean = next(n for n in model.graph if n.op_type == "ReduceMean")
    assert len(mean.inputs) == 1 and list(mean.attributes["axes"].value) == [1]


def test_duplicate_down_adapter_raises():
    reg = Registry()

    def rewrite(node, ctx):
        pass

    reg.add_down_adapter("Gelu", 20, rewrite)
    with pytest.raises(RegistryError, match="duplicate down-adapter for Gelu"):
        reg.add_down_adapter("Gelu", 20, rewrite)


def test_options_from_kwargs_leave_the_exporters_own():
    kw = {"opset": 17, "functions": True, "strict": True}
    opts = ex.ExportOptions.from_kwargs(kw)
    assert (opts.opset, opts.functions, opts.optimize) == (17, True, True)
    assert kw == {"strict": True}


def test_function_plan_helpers():
    """Two calls with the same body become one group and one function; a lone call is inline."""
    nodes = ["a1", "b1", "a2", "b2", "c1", "out"]
    inputs = {"b1": ["a1"], "a2": ["b1"], "b2": ["a2"], "c1": ["b2"], "out": ["c1"]}
    calls = []
    by_node: dict = {}
    for key, members in (("blk", ["a1", "b1"]), ("blk@1", ["a2", "b2"]), ("other", ["c1"])):
        call = ex.ModuleCall(key, "other" if key == "other" else "blk", "pkg.Block", 0)
        call.nodes.extend(members)
        by_node.update((n, call) for n in members)
        calls.append(call)
    users: dict = {}
    for n, ins in inputs.items():
        for a in ins:
            users.setdefault(a, []).append(n)
    for call in calls:
        call.finish(lambda n: inputs.get(n, []), lambda n: users.get(n, []))
    ex.drop_out_of_order(nodes, lambda n: inputs.get(n, []), by_node)
    groups = ex.group_calls(calls, by_node, lambda c: (c.path, len(c.nodes)))
    assert [gr.name for gr in groups] == ["Block_blk"]
    assert "c1" not in by_node and by_node["a2"] is calls[1]

    g = Builder(18, name="m")
    x = g.input("x", ir.DataType.FLOAT, [2])

    class Body(ex.FunctionBody, Builder):
        pass

    body = Body(18, name="Block_blk", parent=g)
    bx = ir.Value(name="bx", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([2]))
    body.inputs.append(bx)
    w = body.initializer("w", np.asarray([1.0, 2.0], dtype=np.float32))
    assert w.producer() is not None and w.producer().op_type == "Constant"
    body.output(body.op("Mul", bx, w))
    fn = ex.add_function(g, body, "Block_blk", ex.function_domain("mine"))
    y = g.op(fn.name, x, domain=fn.domain)
    z = g.op(fn.name, y, domain=fn.domain)
    y.dtype = z.dtype = ir.DataType.FLOAT
    y.shape = z.shape = ir.Shape([2])
    g.output(z, "y")
    out = ex.finish(g.model(), ex.ExportOptions(), backend="mine")
    (res,) = _run(out, np.asarray([1.0, 1.0], dtype=np.float32))
    np.testing.assert_allclose(res, [1.0, 4.0])
