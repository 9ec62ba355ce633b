"""The one-pass ``forward`` writer of imported graphs (``onnxport_torch.codegen``) against fx's own.

Every imported graph (and each subgraph and kept function) is written by :class:`ImportGraph`; fx's
``Graph.python_code`` on the same graph is the reference: the same statements in the same order,
the same callables and attributes, the same values freed after the same statements.
"""

from __future__ import annotations

import ast

import numpy as np
import onnx
import pytest
import torch
import torch.fx as fx
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport_testkit.light import light_inputs, light_models
from onnxport_torch.codegen import ImportGraph

from ..conftest import make_model, tensor_info
from .test_functions import _model as function_model
from .test_untrusted_import import HOSTILE


def _statements(code, globals_: dict) -> list[tuple]:
    """The program of a ``forward``: (assigned names, value) per statement, callables by identity,
    and the names each statement frees (``a = b = None``)."""
    tree = ast.parse(code)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    out: list[tuple] = []

    def norm(node: ast.AST) -> object:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in globals_ \
                and node.func.id != "getattr":
            return ("call", id(globals_[node.func.id]), tuple(ast.unparse(a) for a in node.args),
                    tuple((k.arg, ast.unparse(k.value)) for k in node.keywords))
        return ast.unparse(node)

    for st in fn.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) and st.value.value is None:
            out[-1][2].update(t.id for t in st.targets)
        elif isinstance(st, ast.Assign):
            out.append(([t.id for t in st.targets], norm(st.value), set()))
        else:
            out.append((ast.unparse(st), None, set()))
    return [(tuple(a), v, frozenset(d)) for a, v, d in out]


def _graphs(module: torch.nn.Module) -> list[fx.Graph]:
    return [m.graph for m in module.modules() if isinstance(m, fx.GraphModule)]


def _same_program(module: torch.nn.Module) -> int:
    """Asserts each graph's code equals fx's; returns how many graphs the fast writer wrote."""
    fast = 0
    for graph in _graphs(module):
        ours = graph.python_code("self")
        theirs = fx.Graph.python_code(graph, "self")
        assert "pytree" in theirs.globals  # fx's writer always registers its custom builtins
        fast += "pytree" not in ours.globals  # the one-pass writer registers only what the code reads
        assert _statements(ours.src, ours.globals) == _statements(theirs.src, theirs.globals)
        compile(ours.src, "<forward>", "exec")
    return fast


def _mlp() -> onnx.ModelProto:
    """Gemm -> Relu -> Gemm (native Linear layers with ``modules=True``)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in [("fc1.weight", (8, 4)), ("fc1.bias", (8,)), ("fc2.weight", (3, 8)), ("fc2.bias", (3,))]]
    nodes = [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], name="fc2", transB=1)]
    return make_model(nodes, [tensor_info("x", ["batch", 4])], [tensor_info("y", ["batch", 3])], inits)


def _split_model() -> onnx.ModelProto:
    """Split (several outputs, one unused), Concat of a weight, a Reshape by a constant shape, a node
    nothing reads."""
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w.0")
    shape = numpy_helper.from_array(np.array([3, -1], np.int64), "shape")
    nodes = [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3, name="split"),
             helper.make_node("Concat", ["a", "w.0", "b"], ["cat"], axis=0, name="cat"),
             helper.make_node("Reshape", ["cat", "shape"], ["y"], name="reshape"),
             helper.make_node("Neg", ["a"], ["unread"], name="unread")]
    return make_model(nodes, [tensor_info("x", [6, 3])], [tensor_info("y", [3, 6])], [w, shape], opset=21)


def _loop_model() -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "w"], ["acc_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [tensor_info("i", [], TensorProto.INT64), tensor_info("cond_in", [], TensorProto.BOOL),
                 tensor_info("acc", [2])],
        [tensor_info("cond_out", [], TensorProto.BOOL), tensor_info("acc_out", [2])])
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)
    return make_model([node], [tensor_info("M", [], TensorProto.INT64), tensor_info("x", [2]), tensor_info("w", [2])],
                      [tensor_info("y", [2])])


def _hostile_model() -> onnx.ModelProto:
    nodes, inputs, inits, prev = [], [], [], None
    for i, name in enumerate(HOSTILE):
        inputs.append(tensor_info(name, [2]))
        inits.append(numpy_helper.from_array(np.full(2, i, np.float32), f"{name} w"))
        out = f"{name}) out{i}"
        nodes.append(helper.make_node("Add", [name if prev is None else prev, f"{name} w"], [out], name=name))
        prev = out
    return make_model(nodes, inputs, [tensor_info(prev, [2])], inits)


MODELS = {"mlp": _mlp, "split": _split_model, "loop": _loop_model, "functions": function_model,
          "hostile names": _hostile_model}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("modules", [True, False])
def test_the_program_is_fx_s_statement_for_statement(name, modules):
    module = onnxport.import_model(MODELS[name](), modules=modules)
    assert _same_program(module) >= 1


@pytest.mark.parametrize("model", ["squeezenet", "inception_v1"])
def test_light_models_same_program_and_numbers(model):
    path = next(p for k, p in light_models().items() if model in k)
    proto = onnx.load(str(path))
    module = onnxport.import_model(proto)
    assert _same_program(module) == 1
    feeds = [torch.from_numpy(x) for x in light_inputs(proto)]
    with torch.no_grad():
        ours = module(*feeds)
        theirs_code = fx.Graph.python_code(module.graph, "self")
        ns = dict(theirs_code.globals)
        exec(compile(theirs_code.src, "<fx>", "exec"), ns)
        theirs = ns["forward"](module, *feeds)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)


def test_line_map_names_each_statement_s_node():
    module = onnxport.import_model(_split_model())
    code = module.graph.python_code("self")
    lines = code.src.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("def forward"))
    nodes = list(module.graph.nodes)
    for key, k in code._lineno_map.items():
        line = lines[start + key].strip()
        node = nodes[k]
        assert line.startswith("return") if node.op == "output" else line.startswith(f"{node.name} = "), (line, node)
    written = [i for i, line in enumerate(lines[start + 1:], 1) if line.strip()]
    assert sorted(code._lineno_map) == written


def test_options_and_edits_go_to_fx():
    module = onnxport.import_model(_mlp())
    assert "No stacktrace" in module.print_readable(print_output=False)  # verbose: fx's writer
    x = torch.randn(2, 4)
    before = module(x)
    out = next(n for n in module.graph.nodes if n.op == "output")
    with module.graph.inserting_before(out):
        doubled = module.graph.call_method("mul", (out.args[0], 2.0))  # a node kind the writer leaves to fx
    out.args = (doubled,)
    module.recompile()
    assert ".mul(2.0)" in module.code
    torch.testing.assert_close(module(x), before * 2)


def test_fx_show_variables_go_to_fx(monkeypatch):
    module = onnxport.import_model(_mlp())
    monkeypatch.setenv("FX_GRAPH_SHOW_META", "1")
    assert '"""' in module.graph.python_code("self").src  # fx writes each node's meta


def test_float_constants_and_nested_arguments_are_written_exactly():
    graph = ImportGraph()
    x = graph.placeholder("x")
    values = (float("inf"), float("-inf"), 0.1, -0.0, [1, (2,)], slice(None, 3, None), torch.float16, None, True, "a'b")
    y = graph.call_function(_echo, (x, *values))
    graph.output(y)
    code = graph.python_code("self")
    assert "_fn" in code.src
    ns = dict(code.globals)
    exec(code.src, ns)
    got = ns["forward"](None, 5)
    assert got[0] == 5 and got[1:3] == (float("inf"), float("-inf")) and got[3:] == values[2:]
    assert str(got[4]) == "-0.0"
    nan = ImportGraph()
    nan.output(nan.call_function(_echo, (float("nan"),)))
    ns = dict(nan.python_code("self").globals)
    exec(nan.python_code("self").src, ns)
    assert np.isnan(ns["forward"](None)[0])


def _echo(*args):
    return args


class _Named:
    def __init__(self, name: str, k: int) -> None:
        self.__name__, self.k = name, k

    def __call__(self, x: int) -> int:
        return x * 10 + self.k


def test_callables_of_one_name_keep_their_own_globals():
    """Unnamed nodes of one op share a name; a node may be called like a suffixed one ("relu_3")."""
    graph = ImportGraph()
    x = graph.placeholder("x")
    for k, name in enumerate(["relu", "relu_3", "relu", "relu", "relu_2", "relu"]):
        x = graph.call_function(_Named(name, k), (x,))
    graph.output(x)
    code = graph.python_code("self")
    assert "pytree" not in code.globals  # the one-pass writer wrote it
    assert len({id(f) for k, f in code.globals.items() if k.startswith("_fn")}) == 6
    ns = dict(code.globals)
    exec(code.src, ns)
    assert ns["forward"](None, 0) == 12345

