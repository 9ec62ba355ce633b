"""An unsupported op's error names other backends without importing their frameworks."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import sys
    import onnx
    from onnx import TensorProto, helper
    import onnxport

    node = helper.make_node("Frob", ["x"], ["y"], name="frob", domain="com.example")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.example", 1)])
    try:
        onnxport.import_model(model, backend="torch")
    except onnxport.UnsupportedOpError as exc:
        print("MESSAGE", str(exc).replace("\\n", " "))
    print("LOADED", "jax" in sys.modules, "tensorflow" in sys.modules)
    """
)


def test_unsupported_op_error_does_not_import_other_frameworks():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert "com.example::Frob" in lines["MESSAGE"] and "'frob'" in lines["MESSAGE"]
    assert "no loaded backend supports it" in lines["MESSAGE"]
    assert lines["LOADED"] == "False False"
