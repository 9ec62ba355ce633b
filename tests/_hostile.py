"""Hostile models every backend must refuse at call time (shared by the backends' tests)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .conftest import make_model, tensor_info

#: ops whose output a tiny model can make gigabytes large
BOMB_OPS = ["ConstantOfShape", "Tile", "Expand", "Range"]
#: the element budget the tests set (ONNXPORT_MAX_ELEMENTS): far below the bombs' 2**32
BUDGET = 2**28


def bomb_model(op: str) -> onnx.ModelProto:
    """A ~300-byte model whose node ``bomb`` would create 2**32 elements, summed by ``sum``."""
    big = 2**16
    i64 = lambda a, n: numpy_helper.from_array(np.array(a, np.int64), n)  # noqa: E731
    if op == "ConstantOfShape":
        inits, ins = [i64([big, big], "s")], ["s"]
    elif op == "Tile":
        inits, ins = [numpy_helper.from_array(np.ones((2, 2), np.float32), "d"), i64([big, big], "r")], ["d", "r"]
    elif op == "Expand":
        inits, ins = [numpy_helper.from_array(np.ones(1, np.float32), "d"), i64([big, big], "s")], ["d", "s"]
    else:
        inits, ins = [i64(0, "a"), i64(big * big, "b"), i64(1, "c")], ["a", "b", "c"]
    dtype = TensorProto.INT64 if op == "Range" else TensorProto.FLOAT
    return make_model([helper.make_node(op, ins, ["big"], name="bomb"),
                       helper.make_node("ReduceSum", ["big"], ["s_out"], name="sum", keepdims=0)],
                      [], [tensor_info("s_out", None, dtype)], inits)


def inconsistent_matmul() -> onnx.ModelProto:
    """``x[n, k] @ w[16, 5]``: any ``k`` but 16 fails at call time in node ``proj``."""
    w = numpy_helper.from_array(np.ones((16, 5), np.float32), "w")
    return make_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
                      [tensor_info("x", ["n", "k"])], [tensor_info("y", ["n", 5])], [w])
