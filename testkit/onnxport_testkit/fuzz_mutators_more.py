"""Mutators of the fuzz test for the classes earlier runs found: a local function called inside a
subgraph, an external-data location that runs through a file, sizes computed at call time, a
declared type that contradicts a constant, a value read out of scope, initializer data for another
type. :data:`MUTATORS` is the whole set the fuzz test draws from."""

from __future__ import annotations

import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import fuzz_mutators as _base
from .fuzz_seeds import WEIGHTS_FILE, Case

_F = TensorProto.FLOAT


def _bodies(case: Case) -> list[onnx.GraphProto]:
    """Every subgraph of the main graph (If branches, Loop and Scan bodies, nested ones)."""
    return [g for g in _base._graphs(case.proto.graph)][1:]


def _with_bodies(case: Case) -> list[onnx.GraphProto]:
    """The subgraphs of ``case``; a model without any is first replaced by the control-flow seed
    (its external files dropped): the mutations of subgraphs need one."""
    if not _bodies(case) and case.raw is None:
        from .fuzz_seeds import control_flow

        case.proto = control_flow().proto
        case.files.clear()
        case.name += "+control_flow"
    return _bodies(case)


def function_in_subgraph(rng: random.Random, case: Case) -> str | None:
    """A call of a model-local function inside a subgraph: an identity-like function spliced after
    a node of a body (its output renamed, the call producing the old name)."""
    bodies = [g for g in _with_bodies(case) if g.node]
    if not bodies:
        return None
    g = rng.choice(bodies)
    node = rng.choice(list(g.node))
    if not node.output or not node.output[0]:
        return None
    if not any(f.domain == "fuzz.local" for f in case.proto.functions):
        fn = helper.make_function("fuzz.local", "Pass", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])],
                                  [helper.make_opsetid("", 21)])
        case.proto.functions.append(fn)
        case.proto.opset_import.append(helper.make_opsetid("fuzz.local", 1))
    name = node.output[0]
    node.output[0] = name + "_pre"
    call = helper.make_node("Pass", [name + "_pre"], [name], domain="fuzz.local", name=f"call_in_{g.name}")
    nodes = list(g.node)
    nodes.insert(nodes.index(node) + 1, call)
    del g.node[:]
    g.node.extend(nodes)
    return f"local function called after {node.op_type} in body {g.name!r}"


def external_through_file(rng: random.Random, case: Case) -> str | None:
    """An external-data location that runs through the weights file (``weights.bin/./.``), in an
    initializer or moved into a Constant node's attribute tensor."""
    g = case.proto.graph
    ext = [t for t in g.initializer if t.data_location == TensorProto.EXTERNAL]
    if not ext:
        return None
    t = rng.choice(ext)
    for e in t.external_data:
        if e.key == "location":
            e.value = WEIGHTS_FILE + rng.choice(["/./././", "/.", "/", "/./", "/./x/.."])
    if rng.random() < 0.5:  # the same tensor as a Constant's value
        g.initializer.remove(t)
        const = helper.make_node("Constant", [], [t.name], name=f"const_{t.name}")
        const.attribute.append(helper.make_attribute("value", t))
        nodes = [const, *g.node]
        del g.node[:]
        g.node.extend(nodes)
        return f"external location through the file, attribute tensor {t.name!r}"
    return f"external location through the file, initializer {t.name!r}"


def computed_bomb(rng: random.Random, case: Case) -> str | None:
    """An op whose output size is computed at call time (from the first input's shape or data) and
    passes any memory: ConstantOfShape, Expand, Tile, Range, a broadcasting Mul, OneHot, a window."""
    g = case.proto.graph
    inputs = [v for v in g.input if v.name not in {t.name for t in g.initializer}]
    if not inputs:
        return None
    x = inputs[0].name
    big = rng.choice([2**16, 2**20, 2**31])
    k = f"cbomb_{len(g.node)}"
    i64 = lambda a, n: numpy_helper.from_array(np.array(a, np.int64), n)  # noqa: E731
    op = rng.choice(["ConstantOfShape", "Expand", "Tile", "Range", "Mul", "OneHot", "HannWindow"])
    # n = (elements of x) * big, computed at call time
    nodes = [helper.make_node("Shape", [x], [k + "_s"]),
             helper.make_node("ReduceProd", [k + "_s"], [k + "_p"], keepdims=1),
             helper.make_node("Mul", [k + "_p", k + "_big"], [k + "_n"])]
    inits = [i64([big], k + "_big")]
    if op == "ConstantOfShape":
        nodes += [helper.make_node("Concat", [k + "_n", k + "_n"], [k + "_d"], axis=0),
                  helper.make_node(op, [k + "_d"], [k], name=k)]
    elif op in ("Expand", "Tile"):
        inits.append(numpy_helper.from_array(np.ones((1, 1), np.float32), k + "_one"))
        nodes += [helper.make_node("Concat", [k + "_n", k + "_n"], [k + "_d"], axis=0),
                  helper.make_node(op, [k + "_one", k + "_d"], [k], name=k)]
    elif op == "Range":
        inits += [i64(0, k + "_a"), i64(1, k + "_c")]
        nodes += [helper.make_node("Squeeze", [k + "_n"], [k + "_lim"]),
                  helper.make_node(op, [k + "_a", k + "_lim", k + "_c"], [k], name=k)]
    elif op == "Mul":  # [n] * [n, 1]: n**2 elements
        inits.append(i64([1], k + "_ax"))
        nodes += [helper.make_node("ConstantOfShape", [k + "_n"], [k + "_v"]),
                  helper.make_node("Unsqueeze", [k + "_v", k + "_ax"], [k + "_col"]),
                  helper.make_node(op, [k + "_v", k + "_col"], [k], name=k)]
    elif op == "OneHot":
        inits.append(numpy_helper.from_array(np.array([0, 1], np.float32), k + "_vals"))
        nodes += [helper.make_node(op, [k + "_s", k + "_n", k + "_vals"], [k], name=k)]
    else:
        nodes += [helper.make_node("Squeeze", [k + "_n"], [k + "_len"]), helper.make_node(op, [k + "_len"], [k], name=k)]
    g.initializer.extend(inits)
    g.node.extend(nodes)
    g.output.append(helper.make_value_info(k, onnx.TypeProto()))
    return f"{op} sized {big} x the input at call time"


def constant_declared(rng: random.Random, case: Case) -> str | None:
    """A value_info that contradicts a node's output (a Constant's above all): another type or shape."""
    outs = [(n, n.output[0]) for n in case.proto.graph.node if n.output and n.output[0]]
    consts = [(n, o) for n, o in outs if n.op_type == "Constant"]
    node, name = rng.choice(consts or outs) if (consts or outs) else (None, None)
    if node is None:
        return None
    elem = rng.choice([TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT, TensorProto.UINT8])
    case.proto.graph.value_info.append(helper.make_tensor_value_info(name, elem, [rng.choice([1, 7, 2**40])]))
    return f"value_info of {node.op_type} output {name!r}"


def out_of_scope(rng: random.Random, case: Case) -> str | None:
    """A node reading a value it cannot see: one produced only inside a subgraph (read by the main
    graph or by another subgraph), or one produced later in a sibling branch."""
    bodies = [g for g in _with_bodies(case) if g.node]
    if not bodies:
        return None
    g = rng.choice(bodies)
    hidden = rng.choice([o for n in g.node for o in n.output if o] or [None])
    if hidden is None:
        return None
    readers = [n for n in case.proto.graph.node if n.input] + [n for b in bodies if b is not g for n in b.node if n.input]
    if not readers:
        return None
    reader = rng.choice(readers)
    reader.input[rng.randrange(len(reader.input))] = hidden
    return f"{reader.op_type} reads {hidden!r} from inside body {g.name!r}"


def data_for_other_type(rng: random.Random, case: Case) -> str | None:
    """An initializer whose data does not match its element type: bytes of another type's size, or
    values in another type's field."""
    ts = [t for t in case.proto.graph.initializer if t.data_location != TensorProto.EXTERNAL]
    if not ts:
        return None
    t = rng.choice(ts)
    n = int(np.prod(t.dims)) if t.dims else 1
    if rng.random() < 0.5:
        t.ClearField("raw_data")
        other = rng.choice([np.int64, np.float64, np.int8, np.float16])
        if np.dtype(other) == onnx.helper.tensor_dtype_to_np_dtype(t.data_type):
            other = np.int8
        t.raw_data = np.zeros(n, other).tobytes()
        return f"raw bytes of {np.dtype(other).name} in {t.name!r}"
    field = {TensorProto.FLOAT: "int64_data", TensorProto.INT64: "float_data"}.get(t.data_type, "double_data")
    t.ClearField("raw_data")
    getattr(t, field).extend([1] * n)
    return f"{field} in {t.name!r}"


#: the mutators this module adds
MORE: tuple[_base.Mutator, ...] = (function_in_subgraph, external_through_file, computed_bomb, constant_declared,
                                   out_of_scope, data_for_other_type)
#: every mutator the fuzz test draws from
MUTATORS: tuple[_base.Mutator, ...] = _base.MUTATORS + MORE
