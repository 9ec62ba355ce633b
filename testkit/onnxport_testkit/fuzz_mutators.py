"""Mutators of the fuzz test: each breaks one thing a hostile or careless model file can break."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import onnx
from onnx import AttributeProto, TensorProto, helper

from .fuzz_seeds import WEIGHTS_FILE, Case

Mutator = Callable[[random.Random, Case], str | None]

_DTYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32, TensorProto.INT8,
           TensorProto.UINT8, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.STRING, TensorProto.BFLOAT16,
           TensorProto.COMPLEX64, 0, 99, TensorProto.INT4, TensorProto.FLOAT8E4M3FN]
_HOSTILE_NAMES = ["", "x" * 5000, "a'b\"c", "line\nbreak", "f(x)", "class", "def", "__init__", "1abc",
                  "weight", "self", "a.b.c", "\\", "{}", "# comment", "é名", "forward", "training"]
_BIG = [2**20, 2**31, 2**40, 2**62, -1, -7, 0]


def _graphs(g: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                yield from _graphs(a.g)
            for sg in a.graphs:
                yield from _graphs(sg)


def _all_nodes(case: Case) -> list[onnx.NodeProto]:
    nodes = [n for g in _graphs(case.proto.graph) for n in g.node]
    for f in case.proto.functions:
        nodes.extend(f.node)
    return nodes


def _tensors(case: Case) -> list[onnx.TensorProto]:
    out = list(case.proto.graph.initializer)
    for n in _all_nodes(case):
        for a in n.attribute:
            if a.HasField("t"):
                out.append(a.t)
    return out


def _value_names(case: Case) -> list[str]:
    g = case.proto.graph
    names = [v.name for v in g.input] + [t.name for t in g.initializer]
    for n in g.node:
        names.extend(o for o in n.output)
    return [n for n in names if n]


# -- tensors -------------------------------------------------------------------------------
def raw_length(rng: random.Random, case: Case) -> str | None:
    ts = [t for t in _tensors(case) if t.raw_data]
    if not ts:
        return None
    t = rng.choice(ts)
    if rng.random() < 0.5:
        t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data))]
    else:
        t.raw_data = t.raw_data + bytes(rng.choice([1, 3, 4, 64]))
    return f"raw_data length of {t.name!r}"


def dtype(rng: random.Random, case: Case) -> str | None:
    ts = _tensors(case)
    if not ts:
        return None
    t = rng.choice(ts)
    t.data_type = rng.choice(_DTYPES)
    return f"data_type of {t.name!r} -> {t.data_type}"


def dims(rng: random.Random, case: Case) -> str | None:
    ts = _tensors(case)
    if not ts:
        return None
    t = rng.choice(ts)
    choice = rng.randrange(4)
    if choice == 0 and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice(_BIG)
    elif choice == 1:
        t.dims.append(rng.choice([0, 1, 2, 2**40]))
    elif choice == 2 and t.dims:
        del t.dims[:]
    else:
        t.dims[:] = [int(d) for d in reversed(t.dims)] + [1]
    return f"dims of {t.name!r} -> {list(t.dims)}"


def typed_fields(rng: random.Random, case: Case) -> str | None:
    ts = _tensors(case)
    if not ts:
        return None
    t = rng.choice(ts)
    t.ClearField("raw_data")
    field = rng.choice(["float_data", "int64_data", "int32_data", "double_data", "string_data"])
    n = rng.choice([0, 1, 5, 200])
    if field == "string_data":
        getattr(t, field).extend([b"\xff\xfe"] * n)
    else:
        getattr(t, field).extend([rng.randint(-3, 3) for _ in range(n)])
    return f"{t.name!r} gets {n} {field}"


def no_data(rng: random.Random, case: Case) -> str | None:
    ts = _tensors(case)
    if not ts:
        return None
    t = rng.choice(ts)
    for f in ("raw_data", "float_data", "int64_data", "int32_data", "double_data"):
        t.ClearField(f)
    if rng.random() < 0.5:
        t.dims[:] = [4096, 8192]
    if t.data_location == TensorProto.EXTERNAL:
        t.data_location = TensorProto.DEFAULT
        del t.external_data[:]
    return f"{t.name!r} has no data"


def sparse(rng: random.Random, case: Case) -> str | None:
    g = case.proto.graph
    dense = [t for t in g.initializer if t.raw_data and t.data_type == TensorProto.FLOAT]
    if not dense:
        return None
    t = rng.choice(dense)
    arr = onnx.numpy_helper.to_array(t)
    flat = arr.reshape(-1)
    idx = [i for i in range(flat.size) if flat[i] != 0]
    values = onnx.numpy_helper.from_array(flat[idx], t.name)
    indices = onnx.numpy_helper.from_array(__import__("numpy").array(idx, "int64"), "")
    sp = helper.make_sparse_tensor(values, indices, list(arr.shape))
    g.initializer.remove(t)
    g.sparse_initializer.append(sp)
    return f"{t.name!r} as a sparse initializer"


# -- names ---------------------------------------------------------------------------------
def duplicate(rng: random.Random, case: Case) -> str | None:
    g = case.proto.graph
    if rng.random() < 0.5 and g.input:
        g.input.append(g.input[rng.randrange(len(g.input))])
        return "duplicate graph input"
    if not g.initializer:
        return None
    t = onnx.TensorProto()
    t.CopyFrom(rng.choice(g.initializer))
    if t.raw_data:
        t.raw_data = bytes(len(t.raw_data))
    g.initializer.append(t)
    return f"duplicate initializer {t.name!r}"


def rename(rng: random.Random, case: Case) -> str | None:
    names = _value_names(case)
    if not names:
        return None
    old, new = rng.choice(names), rng.choice(_HOSTILE_NAMES)
    everywhere = rng.random() < 0.7
    for g in _graphs(case.proto.graph):
        for coll in (g.input, g.output, g.value_info, g.initializer):
            for v in coll:
                if v.name == old:
                    v.name = new
                    if not everywhere:
                        return f"one occurrence of {old!r} -> {new!r}"
        for n in g.node:
            for seq in (n.input, n.output):
                for i, x in enumerate(seq):
                    if x == old:
                        seq[i] = new
    return f"{old!r} -> {new!r}"


def rename_node(rng: random.Random, case: Case) -> str | None:
    nodes = _all_nodes(case)
    if not nodes:
        return None
    rng.choice(nodes).name = rng.choice(_HOSTILE_NAMES)
    return "node name"


# -- nodes and attributes --------------------------------------------------------------------
def attribute_type(rng: random.Random, case: Case) -> str | None:
    nodes = [n for n in _all_nodes(case) if n.attribute]
    if not nodes:
        return None
    n = rng.choice(nodes)
    a = rng.choice(n.attribute)
    name = a.name
    repl = rng.choice([
        helper.make_attribute(name, 3), helper.make_attribute(name, [3, 3]), helper.make_attribute(name, 1.5),
        helper.make_attribute(name, "str"), helper.make_attribute(name, onnx.numpy_helper.from_array(
            __import__("numpy").ones(2, "float32"))), helper.make_attribute(name, [-(2**40), 2**40]),
        helper.make_attribute(name, [1.0, 2.0]),
    ])
    a.CopyFrom(repl)
    return f"attribute {name!r} of {n.op_type} retyped"


def attribute_add(rng: random.Random, case: Case) -> str | None:
    nodes = _all_nodes(case)
    n = rng.choice(nodes)
    kind = rng.randrange(4)
    if kind == 0 and n.attribute:
        n.attribute.append(n.attribute[rng.randrange(len(n.attribute))])
        return "duplicate attribute"
    if kind == 1:
        name = rng.choice(["kernel_shape", "transB", "axis", "perm", "pads", "value_float", "alpha", "to"])
        n.attribute.append(helper.make_attribute(name, rng.choice([0, 1, 2**40, -5])))
        return f"added {name}"
    if kind == 2:
        a = AttributeProto(name=rng.choice(["alpha", "transB", "axis", "value_float"]), ref_attr_name="p",
                           type=rng.choice([AttributeProto.FLOAT, AttributeProto.INT]))
        n.attribute.append(a)
        return "ref_attr_name outside a function"
    if n.attribute:
        del n.attribute[rng.randrange(len(n.attribute))]
        return "attribute removed"
    return None


def op_type(rng: random.Random, case: Case) -> str | None:
    n = rng.choice(_all_nodes(case))
    n.op_type = rng.choice(["Add", "MatMul", "Conv", "Reshape", "Tile", "Expand", "Concat", "Gather", "Sub",
                            "Softmax", "Gemm", "If", "Identity", "NoSuchOp", "Cast", "Split"])
    return f"op_type -> {n.op_type}"


def node_inputs(rng: random.Random, case: Case) -> str | None:
    n = rng.choice(_all_nodes(case))
    names = _value_names(case)
    kind = rng.randrange(4)
    if kind == 0 and n.input:
        del n.input[rng.randrange(len(n.input))]
    elif kind == 1:
        n.input.append(rng.choice(names + [""]))
    elif kind == 2 and n.input:
        n.input[rng.randrange(len(n.input))] = rng.choice(names + ["missing"])
    else:
        n.output.append(rng.choice(["extra", names[0]]))
    return f"inputs of {n.op_type}"


def opset(rng: random.Random, case: Case) -> str | None:
    imports = case.proto.opset_import
    o = rng.choice(imports)
    kind = rng.randrange(3)
    if kind == 0:
        o.version = rng.choice([999, 2**31 + 3, 2**62, 0, -1, 1, 6])
    elif kind == 1:
        o.domain = "ai.onnx" if o.domain == "" else "ai.onnx.ml"
        for n in _all_nodes(case):
            if n.domain == "" and rng.random() < 0.5:
                n.domain = "ai.onnx"
    else:
        imports.append(helper.make_opsetid(o.domain, rng.choice([1, 999])))
    return "opset imports"


def types(rng: random.Random, case: Case) -> str | None:
    g = case.proto.graph
    targets = list(g.output) + list(g.value_info) + list(g.input)
    if rng.random() < 0.5:
        names = [o for n in g.node for o in n.output]
        vi = helper.make_tensor_value_info(rng.choice(names), rng.choice(_DTYPES[:9]), [rng.choice([1, 7, 2**40])])
        g.value_info.append(vi)
        return "value_info added"
    v = rng.choice(targets)
    tt = v.type.tensor_type
    if rng.random() < 0.5:
        tt.elem_type = rng.choice(_DTYPES)
    else:
        dims = tt.shape.dim
        if dims:
            dims[rng.randrange(len(dims))].dim_value = rng.choice([0, 5, 2**40, 1])
    return f"type of {v.name!r}"


def bomb(rng: random.Random, case: Case) -> str | None:
    import numpy as np

    g = case.proto.graph
    big = rng.choice([2**16, 2**20, 2**31, 2**40])
    op = rng.choice(["ConstantOfShape", "Tile", "Expand", "Range", "Pad"])
    k = f"bomb_{len(g.node)}"
    i64 = lambda a, n: onnx.numpy_helper.from_array(np.array(a, np.int64), n)  # noqa: E731
    if op == "ConstantOfShape":
        g.initializer.append(i64([big, big], k + "_s"))
        node = helper.make_node(op, [k + "_s"], [k], name=k)
    elif op == "Tile":
        g.initializer.extend([onnx.numpy_helper.from_array(np.ones((2, 2), np.float32), k + "_x"),
                              i64([big, big], k + "_r")])
        node = helper.make_node(op, [k + "_x", k + "_r"], [k], name=k)
    elif op == "Expand":
        g.initializer.extend([onnx.numpy_helper.from_array(np.ones(1, np.float32), k + "_x"),
                              i64([big, big], k + "_s")])
        node = helper.make_node(op, [k + "_x", k + "_s"], [k], name=k)
    elif op == "Range":
        g.initializer.extend([i64(0, k + "_a"), i64(min(big * big, 2**62), k + "_b"), i64(1, k + "_d")])
        node = helper.make_node(op, [k + "_a", k + "_b", k + "_d"], [k], name=k)
    else:
        g.initializer.extend([onnx.numpy_helper.from_array(np.ones((2, 2), np.float32), k + "_x"),
                              i64([big, 0, big, 0], k + "_p")])
        node = helper.make_node(op, [k + "_x", k + "_p"], [k], name=k)
    g.node.append(node)
    g.output.append(helper.make_value_info(k, onnx.TypeProto()))
    return f"{op} of {big}"


def subgraph(rng: random.Random, case: Case) -> str | None:
    bodies = [(n, a) for n in _all_nodes(case) for a in n.attribute if a.HasField("g")]
    if not bodies:
        return None
    n, a = rng.choice(bodies)
    g = a.g
    kind = rng.randrange(3)
    if kind == 0 and g.output:
        del g.output[rng.randrange(len(g.output))]
    elif kind == 1:
        g.input.append(helper.make_tensor_value_info("extra_in", TensorProto.FLOAT, [3]))
    elif g.input:
        del g.input[rng.randrange(len(g.input))]
    else:
        g.output.append(g.output[0])
    return f"body of {n.op_type}"


def function(rng: random.Random, case: Case) -> str | None:
    if not case.proto.functions:
        return None
    f = case.proto.functions[0]
    kind = rng.randrange(3)
    if kind == 0:
        f.node.append(helper.make_node(f.name, ["o"], ["o2"], domain=f.domain))
        f.output[0] = "o2"
    elif kind == 1:
        f.opset_import[0].version = rng.choice([1, 10, 999])
    else:
        f.attribute.append("alpha")
        f.node[0].attribute.append(AttributeProto(name="alpha", ref_attr_name="alpha", type=AttributeProto.FLOAT))
    return "function"


def external(rng: random.Random, case: Case) -> str | None:
    ext = [t for t in case.proto.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    if not ext:
        return None
    t = rng.choice(ext)
    info = {e.key: e for e in t.external_data}
    kind = rng.randrange(9)
    if kind == 0:
        info["location"].value = rng.choice(["../weights.bin", "/etc/passwd", "a\x00b", "missing.bin", "",
                                             "x" * 5000, "sub/../../weights.bin", WEIGHTS_FILE + "/x", "."])
    elif kind == 1:
        info["length"].value = rng.choice(["0", "1", "-4", "abc", str(2**40), "99999"])
    elif kind == 2:
        info["offset"].value = rng.choice(["3", "-1", "abc", str(2**62)])
    elif kind == 3:
        case.symlinks.append(("loop_a", "loop_b"))
        case.symlinks.append(("loop_b", "loop_a"))
        info["location"].value = "loop_a"
    elif kind == 4:
        case.symlinks.append(("link.bin", "/etc/hostname"))
        info["location"].value = "link.bin"
    elif kind == 5:
        case.hardlinks.append(("hard.bin", WEIGHTS_FILE))
        info["location"].value = "hard.bin"
    elif kind == 6:
        del t.external_data[:]
    elif kind == 7:
        case.files[WEIGHTS_FILE] = case.files[WEIGHTS_FILE][:10]
    else:
        t.raw_data = b"\x00" * 16  # external and inline at once
    return f"external data of {t.name!r}"


def text(rng: random.Random, case: Case) -> str | None:
    p = case.proto
    bad = b"\xff\xfe\x80"
    kind = rng.randrange(3)
    if kind == 0:
        p.producer_name = bad.decode("latin-1")
        raw = p.SerializeToString().replace(bad.decode("latin-1").encode("utf-8"), bad)
        case.raw = raw
    elif kind == 1:
        p.doc_string = "x" * 100000
    else:
        p.graph.name = rng.choice(_HOSTILE_NAMES)
    return "strings"


def bytes_flip(rng: random.Random, case: Case) -> str | None:
    data = bytearray(case.proto.SerializeToString())
    for _ in range(rng.choice([1, 2, 5])):
        data[rng.randrange(len(data))] = rng.randrange(256)
    case.raw = bytes(data)
    return "bytes flipped"


MUTATORS: tuple[Mutator, ...] = (
    raw_length, dtype, dims, typed_fields, no_data, sparse, duplicate, rename, rename_node, attribute_type,
    attribute_add, op_type, node_inputs, opset, types, bomb, subgraph, function, external, text, bytes_flip,
)
