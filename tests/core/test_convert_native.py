"""``onnxport convert IN -o OUT`` with native files: OUT's suffix (or ``--to`` for a folder) picks
the target; ``--check`` compares the result with onnxruntime. Each case needs its backend."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxport
from onnxport.tools import cli


def _need(backend: str) -> None:
    if backend not in onnxport.backends():
        pytest.skip(f"backend {backend!r} is not installed: pip install onnxport-{backend}")


@pytest.fixture
def mlp_path(tmp_path) -> str:
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["y"])], "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [onnx.numpy_helper.from_array(w1, "w1"), onnx.numpy_helper.from_array(w2, "w2")])
    path = tmp_path / "mlp.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _checked(out: str) -> float:
    line = next(x for x in out.splitlines() if x.startswith("check:"))
    return float(line.rsplit(":", 1)[1])


def test_onnx_to_pt2_and_back(capsys, tmp_path, mlp_path) -> None:
    _need("torch")
    import torch

    pt2 = tmp_path / "m.pt2"
    code, out, err = run(capsys, "convert", mlp_path, "-o", str(pt2), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    program = torch.export.load(pt2)  # a plain torch.export program
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    y = program.module()(torch.from_numpy(x)).detach().numpy()
    w = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(mlp_path).graph.initializer}
    np.testing.assert_allclose(y, np.maximum(x @ w["w1"], 0) @ w["w2"], rtol=1e-5, atol=1e-5)
    code, out, err = run(capsys, "convert", str(pt2), "-o", str(tmp_path / "back.onnx"), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    onnx.checker.check_model(onnx.load(tmp_path / "back.onnx"), full_check=True)


def test_onnx_to_pt_reloads_with_torch_load(capsys, tmp_path, mlp_path) -> None:
    _need("torch")
    import torch

    code, out, err = run(capsys, "convert", mlp_path, "-o", str(tmp_path / "m.pt"), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    import io

    saved = torch.load(tmp_path / "m.pt")  # the documented reload
    assert set(saved) == {"state_dict", "program"} and saved["state_dict"]
    module = torch.export.load(io.BytesIO(saved["program"])).module()
    assert module(torch.zeros(2, 4)).shape == (2, 3)


def test_onnx_to_jax_folder_and_back(capsys, tmp_path, mlp_path) -> None:
    _need("jax")
    folder = tmp_path / "jaxmodel"
    code, out, err = run(capsys, "convert", mlp_path, "-o", str(folder), "--to", "jax", "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    assert (folder / "params.npz").is_file() and (folder / "model.onnx").is_file()
    model = onnxport.get_backend("jax").load(folder)
    assert sum(int(np.size(p)) for p in model.params.values()) == 4 * 8 + 8 * 3
    code, out, err = run(capsys, "convert", str(folder), "-o", str(tmp_path / "back.onnx"), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5


def test_onnx_to_savedmodel_and_keras_in(capsys, tmp_path, mlp_path) -> None:
    _need("tensorflow")
    import keras
    import tensorflow as tf

    folder = tmp_path / "saved"
    code, out, err = run(capsys, "convert", mlp_path, "-o", str(folder), "--to", "tensorflow", "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    assert tf.saved_model.load(str(folder))(tf.zeros((2, 4))).shape == (2, 3)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3, activation="tanh")])
    model.save(tmp_path / "k.keras")
    code, out, err = run(capsys, "convert", str(tmp_path / "k.keras"), "-o", str(tmp_path / "k.onnx"), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5


def test_savedmodel_in(capsys, tmp_path, mlp_path) -> None:
    _need("tensorflow")
    folder = tmp_path / "saved"
    assert run(capsys, "convert", mlp_path, "-o", str(folder), "--to", "tensorflow")[0] == 0
    code, out, err = run(capsys, "convert", str(folder), "-o", str(tmp_path / "s.onnx"), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    import onnx

    assert len(onnx.load(str(tmp_path / "s.onnx")).graph.initializer) > 0  # the variables stay weights


def test_savedmodel_of_a_tf_module_in(capsys, tmp_path) -> None:
    """A SavedModel TensorFlow wrote itself (a tf.Module with a tf.function ``__call__``)."""
    _need("tensorflow")
    import tensorflow as tf

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32), name="w")

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        def __call__(self, x):
            return tf.nn.relu(x @ self.w)

    tf.saved_model.save(Net(), str(tmp_path / "net"))
    code, out, err = run(capsys, "convert", str(tmp_path / "net"), "-o", str(tmp_path / "n.onnx"), "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5


def test_folder_needs_a_backend_and_unknown_input_names_packages(capsys, tmp_path, mlp_path) -> None:
    code, _, err = run(capsys, "convert", mlp_path, "-o", str(tmp_path / "folder"))
    assert code == 1 and "--to BACKEND" in err
    (tmp_path / "w.bin").write_bytes(b"x")
    code, _, err = run(capsys, "convert", str(tmp_path / "w.bin"), "-o", str(tmp_path / "o.onnx"))
    assert code == 1 and "pip install onnxport-" in err
    code, _, err = run(capsys, "convert", mlp_path, "-o", str(tmp_path / "m.pt2"), "--to", "nosuch")
    assert code == 1 and "pip install onnxport-nosuch" in err


def test_opset_of_an_onnx_input_is_honoured(capsys, tmp_path) -> None:
    """``--opset`` converts an .onnx input through the adapters: up (ReduceSum's axes attribute of
    opset 11 becomes an input at 13) and down again (the down-adapters), same numbers in onnxruntime."""
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["s"], axes=[1], keepdims=1), helper.make_node("Relu", ["s"], ["y"])],
        "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])])
    src = tmp_path / "r11.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)]), src)
    up, down = tmp_path / "r18.onnx", tmp_path / "r12.onnx"
    code, out, err = run(capsys, "convert", str(src), "-o", str(up), "--opset", "18", "--check")
    assert code == 0, err
    assert _checked(out) < 1e-6
    m = onnx.load(str(up))
    onnx.checker.check_model(m, full_check=True)
    assert {o.domain: o.version for o in m.opset_import}.get("", None) == 18
    assert len(next(n for n in m.graph.node if n.op_type == "ReduceSum").input) == 2  # axes is an input now
    # down: Gelu (opset 20) through its down-adapter; ReduceSum's axes input has none below 13
    g = helper.make_graph([helper.make_node("Gelu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
    gelu = tmp_path / "gelu20.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]), gelu)
    code, out, err = run(capsys, "convert", str(gelu), "-o", str(down), "--opset", "18", "--check")
    assert code == 0, err
    assert _checked(out) < 1e-5
    m = onnx.load(str(down))
    onnx.checker.check_model(m, full_check=True)
    assert "Gelu" not in {n.op_type for n in m.graph.node}
    code, _, err = run(capsys, "convert", str(up), "-o", str(tmp_path / "r12.onnx"), "--opset", "12")
    assert code == 1 and "opset 12" in err
    code, _, err = run(capsys, "convert", str(src), "-o", str(tmp_path / "same.onnx"))
    assert code == 1 and "--opset" in err  # ONNX to ONNX without a backend or an opset: nothing to do
