"""Model-local functions called from every kind of subgraph (If branches, Loop and Scan bodies,
a subgraph nested in another, a function calling a function) import into every installed backend,
functions kept or inlined, and compute what onnxruntime computes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxport
from onnxport.plugin.backend import accepted_import_options

ort = pytest.importorskip("onnxruntime")
F = T.FLOAT
OPSETS = [h.make_opsetid("", 21), h.make_opsetid("local", 1)]


def _functions() -> list[onnx.FunctionProto]:
    twice = h.make_function("local", "twice", ["a"], ["b"], [h.make_node("Add", ["a", "a"], ["b"])], OPSETS[:1])
    # a function calling another one
    quad = h.make_function("local", "quad", ["a"], ["b"], [h.make_node("twice", ["a"], ["t"], domain="local"),
                                                             h.make_node("twice", ["t"], ["b"], domain="local")],
                           OPSETS)
    return [twice, quad]


def _vi(name: str, elem: int, shape: list[int]) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def _if(fn: str, out: str = "y", cond: str = "c", x: str = "x") -> onnx.NodeProto:
    then = h.make_graph([h.make_node(fn, [x], ["t"], domain="local")], "then", [], [_vi("t", F, [3])])
    other = h.make_graph([h.make_node("Neg", [x], ["e"])], "else", [], [_vi("e", F, [3])])
    return h.make_node("If", [cond], [out], then_branch=then, else_branch=other)


def _loop_body(nodes: list[onnx.NodeProto]) -> onnx.GraphProto:
    return h.make_graph([h.make_node("Identity", ["cond"], ["cond_out"]), *nodes], "body",
                        [_vi("i", T.INT64, []), _vi("cond", T.BOOL, []), _vi("s", F, [3])],
                        [_vi("cond_out", T.BOOL, []), _vi("s_out", F, [3])])


def _model(nodes, inputs, outputs) -> onnx.ModelProto:
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs), opset_imports=OPSETS, functions=_functions())
    onnx.checker.check_model(m, full_check=True)
    return m


X = np.array([1.0, -2.0, 3.0], np.float32)


def _cases() -> dict[str, tuple[onnx.ModelProto, list[np.ndarray]]]:
    io_if = [_vi("c", T.BOOL, []), _vi("x", F, [3])]
    io_loop = [_vi("n", T.INT64, []), _vi("x", F, [3])]
    loop = _loop_body([h.make_node("twice", ["s"], ["s_out"], domain="local")])
    # a Loop body holding an If whose branch calls a function that calls a function
    nested = _loop_body([h.make_node("Greater", ["i", "zero"], ["c"]), _if("quad", "s_out", "c", "s")])
    nested.initializer.append(onnx.numpy_helper.from_array(np.array(0, np.int64), "zero"))
    scan = h.make_graph([h.make_node("Add", ["s", "e"], ["t"]), h.make_node("twice", ["t"], ["s_out"], domain="local"),
                         h.make_node("quad", ["e"], ["o"], domain="local")], "scan",
                        [_vi("s", F, [3]), _vi("e", F, [3])], [_vi("s_out", F, [3]), _vi("o", F, [3])])
    return {
        "if": (_model([_if("twice")], io_if, [_vi("y", F, [3])]), [np.array(True), X]),
        "if_function_calls_function": (_model([_if("quad")], io_if, [_vi("y", F, [3])]), [np.array(True), X]),
        "loop": (_model([h.make_node("Loop", ["n", "", "x"], ["y"], body=loop)], io_loop, [_vi("y", F, [3])]),
                 [np.array(3, np.int64), X]),
        "if_in_loop": (_model([h.make_node("Loop", ["n", "", "x"], ["y"], body=nested)], io_loop, [_vi("y", F, [3])]),
                       [np.array(3, np.int64), X]),
        "scan": (_model([h.make_node("Scan", ["x0", "xs"], ["y", "ys"], body=scan, num_scan_inputs=1)],
                        [_vi("x0", F, [3]), _vi("xs", F, [2, 3])], [_vi("y", F, [3]), _vi("ys", F, [2, 3])]),
                 [X, np.stack([X, 2 * X])]),
    }


CASES = _cases()


@pytest.mark.parametrize("backend", onnxport.backends())
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_function_in_subgraph(backend: str, case: str) -> None:
    model, inputs = CASES[case]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, {i.name: v for i, v in zip(sess.get_inputs(), inputs)})
    be = onnxport.get_backend(backend)
    keep = next(o for o in accepted_import_options(be) if o.name == "keep_functions")
    for value in (None, True, False):
        if not keep.allows(value):
            with pytest.raises(onnxport.InputError, match="keep_functions"):
                onnxport.import_model(model, backend=backend, keep_functions=value)
            continue
        imported = onnxport.import_model(model, backend=backend, keep_functions=value)
        got = be.run(imported, inputs)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)
