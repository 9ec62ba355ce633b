"""A model whose large weights an import reads in place from its file (shared by the backends' tests)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def in_place_model() -> onnx.ModelProto:
    """Gemm with a 76.8 kB float32 weight, an 80 kB float16 initializer summed and 80 kB of int64
    Gather indices (read in place); the 1.2 kB bias stays inline."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((300, 64)).astype(np.float32), "fc.weight")
    b = numpy_helper.from_array(rng.standard_normal(300).astype(np.float32), "fc.bias")
    h = numpy_helper.from_array(rng.standard_normal(40_000).astype(np.float16), "h")
    idx = numpy_helper.from_array(rng.integers(0, 64, 10_000).astype(np.int64), "idx")
    nodes = [helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"], transB=1, name="fc"),
             helper.make_node("Cast", ["h"], ["hf"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("ReduceSum", ["hf"], ["s"], keepdims=0, name="sum"),
             helper.make_node("Gather", ["x", "idx"], ["g"], axis=1, name="gather")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 300]),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("g", TensorProto.FLOAT, [2, 10_000])], [w, b, h, idx])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def check_file_import(tmp_path, backend: str) -> None:
    """The file imports (weights read in place) with outputs bit-equal to the same model given as
    bytes, and the file can be overwritten afterwards without changing the imported model."""
    import onnxport

    path = tmp_path / "m.onnx"
    onnx.save(in_place_model(), path)
    be = onnxport.get_backend(backend)
    x = np.arange(128, dtype=np.float32).reshape(2, 64)
    from_file = onnxport.import_model(path, backend)
    expected = be.run(onnxport.import_model(path.read_bytes(), backend), [x])
    path.write_bytes(b"\0" * len(path.read_bytes()))  # the weights were copied, not mapped
    for a, b in zip(be.run(from_file, [x]), expected):
        np.testing.assert_array_equal(a, b)
