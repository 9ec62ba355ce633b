"""The ``onnxport`` command line, run in-process through ``onnxport.tools.cli.main``."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from onnxport.tools import cli

pytest.importorskip("onnxport_torch")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def mlp_path(tmp_path, mlp_model):
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp_model, path)
    return str(path)


def test_info(capsys, mlp_path) -> None:
    code, out, _ = run(capsys, "info", mlp_path)
    assert code == 0
    assert "opset imports: ai.onnx 21" in out
    assert "parameters: 67 float initializer elements" in out  # 8*4 + 8 + 3*8 + 3
    assert "x: float32 [batch, 4]" in out and "y: float32 [batch, 3]" in out
    assert "     2  Gemm" in out and "     1  Relu" in out
    assert "torch: imports every op" in out


def test_info_asks_only_the_named_backend(capsys, mlp_path) -> None:
    code, out, _ = run(capsys, "info", mlp_path, "--backend", "torch")
    assert code == 0
    backends = out.split("backends:")[1].strip().splitlines()
    assert backends == ["torch: imports every op"]
    code, _, err = run(capsys, "info", mlp_path, "--backend", "nope")
    assert code != 0 and "'nope' is not installed" in err


def test_info_names_ops_a_backend_lacks(capsys, tmp_path) -> None:
    from onnx import helper

    node = helper.make_node("Frobnicate", ["x"], ["y"], domain="com.nowhere")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.nowhere", 1)])
    onnx.save(model, tmp_path / "m.onnx")
    code, out, _ = run(capsys, "info", str(tmp_path / "m.onnx"))
    assert code == 0 and "torch: lacks 1 op(s): com.nowhere::Frobnicate" in out


def test_ops(capsys) -> None:
    code, out, _ = run(capsys, "ops", "--backend", "torch", "--direction", "import")
    assert code == 0
    relu = next(line for line in out.splitlines() if line.split()[2:3] == ["Relu"])
    assert relu.split()[:2] == ["torch", "import"] and "since 14" in relu and "onnxport_torch.ops" in relu
    assert "export" not in {line.split()[1] for line in out.splitlines()[:-1]}


def test_errors_are_one_line_with_nonzero_exit(capsys, tmp_path) -> None:
    code, out, err = run(capsys, "ops", "--backend", "nonesuch")
    assert code == 1 and err.count("\n") == 1 and "BackendNotFoundError: backend 'nonesuch' is not installed" in err
    code, _, err = run(capsys, "info", str(tmp_path / "missing.onnx"))
    assert code == 1 and err.startswith("onnxport: error: ModelError") and "Traceback" not in err


def test_check_random_and_given_inputs(capsys, tmp_path, mlp_path) -> None:
    code, out, _ = run(capsys, "check", mlp_path, "--backend", "torch")
    assert code == 0 and "OK: torch vs onnxruntime, 0 of 1 values differ" in out
    np.savez(tmp_path / "in.npz", x=np.ones((5, 4), np.float32))
    code, out, _ = run(capsys, "check", mlp_path, "--backend", "torch", "--inputs", str(tmp_path / "in.npz"))
    assert code == 0 and "OK" in out
    np.savez(tmp_path / "bad.npz", z=np.ones((5, 4), np.float32))
    code, _, err = run(capsys, "check", mlp_path, "--backend", "torch", "--inputs", str(tmp_path / "bad.npz"))
    assert code == 1 and "InputError" in err and "['x']" in err


def test_check_per_node_names_the_first_diverging_node(capsys, monkeypatch, mlp_path) -> None:
    from onnxport.tools import check

    code, out, _ = run(capsys, "check", mlp_path, "--backend", "torch", "--per-node")
    assert code == 0 and "compared 3 values of 3 nodes" in out

    real = check.run_backend

    def perturbed(model, backend, inputs):  # a backend whose Relu is off by 0.5
        outs = real(model, backend, inputs)
        outs["r"] = outs["r"] + 0.5
        return outs

    monkeypatch.setattr(check, "run_backend", perturbed)
    code, out, _ = run(capsys, "check", mlp_path, "--backend", "torch", "--per-node")
    assert code == 3
    assert "first diverging node: 'relu' (ai.onnx::Relu) -> output 'r'" in out
    assert "input 0 'h': float32[1, 8] min" in out


def test_convert_to_an_unknown_suffix_is_a_clear_error(capsys, tmp_path, mlp_path) -> None:
    code, out, err = run(capsys, "convert", mlp_path, "--backend", "torch", "-o", str(tmp_path / "m.bin"))
    assert code == 1 and "backend 'torch' writes .pt2, .pt, not 'm.bin'" in err
    assert not (tmp_path / "m.bin").exists()


def test_coverage_writes_every_format(capsys, tmp_path) -> None:
    report = {"onnx": "t", "registry": {"torch": {"import": [{"domain": "", "op": "Relu", "since": 14, "source": "x"}],
                                                    "export": []}},
              "results": [{"backend": "torch", "direction": "import", "case": "test_relu", "ops": ["Relu"],
                           "target": "Relu", "opset": 14, "versions": {"Relu": 14}, "outcome": "passed"}]}
    (tmp_path / "r.json").write_text(json.dumps(report))
    code, out, _ = run(capsys, "coverage", "--report", str(tmp_path / "r.json"), "--opset", "14")
    assert code == 0 and "| Relu | 14 | pass 1/1 | - |" in out
    code, out, _ = run(capsys, "coverage", "--report", str(tmp_path / "r.json"), "-o", str(tmp_path / "c.html"))
    assert code == 0 and (tmp_path / "c.html").read_text().startswith("<!DOCTYPE html>")
    code, _, _ = run(capsys, "coverage", "--report", str(tmp_path / "r.json"), "--opset", "14", "-o", str(tmp_path / "c.json"))
    data = json.loads((tmp_path / "c.json").read_text())
    assert list(data["opsets"]) == ["14"] and data["opsets"]["14"]["ops"]["Relu"]["torch"]["import"]["status"] == "tested-passing"
    code, _, err = run(capsys, "coverage", "--report", str(tmp_path / "none.json"))
    assert code == 1 and "ReportError: no testkit report" in err


def test_new_op_scaffolds_the_spec_signature_and_refuses_to_overwrite(capsys, tmp_path) -> None:
    folder = tmp_path / "backends" / "torch" / "onnxport_torch" / "ops" / "import_"
    folder.mkdir(parents=True)
    code, out, err = run(capsys, "new-op", "Relu", "--backend", "torch", "--root", str(tmp_path))
    assert code == 1 and "wrote" not in out, (code, out, err)  # Relu is registered already: refused unless --force
    assert not (folder / "relu.py").exists()
    code, out, _ = run(capsys, "new-op", "LpNormalization", "--backend", "torch", "--root", str(tmp_path), "--force")
    assert code == 0
    src = (folder / "lp_normalization.py").read_text()
    assert '@importer("LpNormalization", since=22)' in src
    assert "def lp_normalization(ctx, input, *, axis=-1, p=2):" in src
    compile(src, "lp_normalization.py", "exec")
    code, _, err = run(capsys, "new-op", "LpNormalization", "--backend", "torch", "--root", str(tmp_path), "--force")
    assert code == 1 and "exists; not overwriting it" in err
    code, _, err = run(capsys, "new-op", "NotAnOp", "--backend", "torch", "--root", str(tmp_path))
    assert code == 1 and "ONNX has no op 'NotAnOp'" in err


def test_scaffold_signatures() -> None:
    assert "def loop(ctx, m=None, cond=None, *v_initial, body):" in cli.scaffold("Loop", "torch")
    assert "def and_(ctx, a, b):" in cli.scaffold("And", "torch")
    assert "def conv(ctx, x, w, b=None, *, auto_pad='NOTSET', dilations=None, group=1, kernel_shape=None, pads=None" in cli.scaffold("Conv", "torch")
    assert cli.snake("BatchNormalization") == "batch_normalization" and cli.snake("GRU") == "gru"


def test_new_op_finds_ops_of_every_onnx_domain(capsys, tmp_path) -> None:
    folder = tmp_path / "backends" / "torch" / "onnxport_torch" / "ops" / "import_"
    folder.mkdir(parents=True)
    root = ("--root", str(tmp_path), "--force")  # --force: a backend may register them already
    code, out, _ = run(capsys, "new-op", "SVMRegressor", "--backend", "torch", *root)
    assert code == 0 and "found SVMRegressor in domain ai.onnx.ml" in out
    src = (folder / "svm_regressor.py").read_text()
    assert '@importer("SVMRegressor", since=1, domain="ai.onnx.ml")' in src
    assert "--onnxport-op ai.onnx.ml::SVMRegressor" in src
    compile(src, "svm_regressor.py", "exec")
    code, out, _ = run(capsys, "new-op", "ai.onnx.preview.training::Adam", "--backend", "torch", *root)
    assert code == 0 and 'domain="ai.onnx.preview.training"' in (folder / "adam.py").read_text()
    code, _, err = run(capsys, "new-op", "LabelEncoder", "--domain", "ai.onnx", "--backend", "torch", *root)
    assert code == 1 and "ONNX defines no op 'LabelEncoder' in domain 'ai.onnx': did you mean --domain ai.onnx.ml?" in err
    code, _, err = run(capsys, "new-op", "Normaliser", "--backend", "torch", *root)
    assert code == 1 and "did you mean Normalizer (--domain ai.onnx.ml)?" in err and "--domain com.example" in err


def test_new_op_scaffolds_a_custom_domain_op_with_a_case_stub(capsys, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "backends" / "torch" / "onnxport_torch" / "ops" / "import_"
    folder.mkdir(parents=True)
    code, out, _ = run(capsys, "new-op", "com.example::FusedGate", "--backend", "torch", "--root", str(tmp_path),
                       "--inputs", "x,gate", "--attribute", "scale=0.5", "--attribute", "mode='sigmoid'", "--since", "2")
    assert code == 0 and "--onnxport-op com.example::FusedGate" in out
    src = (folder / "fused_gate.py").read_text()
    assert "def fused_gate(ctx, x, gate, *, scale=0.5, mode='sigmoid'):" in src
    assert "def _reference(x, gate, *, scale=0.5, mode='sigmoid'):" in src
    assert 'since=2,\n    domain="com.example",' in src
    assert 'cases=[ImportCase((_X, _X), {}, reference=_reference, name="defaults")]' in src
    # the stub imports and registers cleanly: a registry discovering it finds the custom-domain op
    from onnxport.plugin.registry import Registry

    pkg = tmp_path / "scaffolded_ops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "fused_gate.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    assert reg.discover("scaffolded_ops", backend="torch") == 1
    found = reg.find_import("torch", "com.example", "FusedGate", 2)
    assert found is not None and found.cases and found.cases[0].name == "defaults"
    code, _, err = run(capsys, "new-op", "Relu", "--domain", "ai.onnx", "--inputs", "a", "--backend", "torch",
                       "--root", str(tmp_path), "--force")
    assert code == 1 and "is an ONNX op: its inputs, attributes and version come from the spec" in err
    code, _, err = run(capsys, "new-op", "Foo", "--domain", "com.example", "--attribute", "k", "--backend", "torch",
                       "--root", str(tmp_path))
    assert code == 1 and "NAME=DEFAULT" in err


def test_new_plugin_refuses_a_non_empty_folder_and_bad_names(capsys, tmp_path) -> None:
    code, out, _ = run(capsys, "new-plugin", "my-ops", "--backend", "jax", "-o", str(tmp_path / "p"))
    assert code == 0 and "entry point 'my_ops' -> onnxport_my_ops.plugin" in out
    text = (tmp_path / "p" / "pyproject.toml").read_text()
    assert 'name = "onnxport-my-ops"' in text and '[tool.onnxport]\nbackend = "jax"' in text
    assert "--onnxport-package onnxport_my_ops" in text
    code, _, err = run(capsys, "new-plugin", "my-ops", "-o", str(tmp_path / "p"))
    assert code == 1 and "not empty" in err
    code, _, err = run(capsys, "new-plugin", "My Ops!", "-o", str(tmp_path / "q"))
    assert code == 1 and "plugin name" in err
    code, _, err = run(capsys, "new-op", "Relu", "--into", str(tmp_path / "nowhere"))
    assert code == 1 and "no plugin folder" in err


def test_ops_domain_filter(capsys) -> None:
    code, out, _ = run(capsys, "ops", "--backend", "torch", "--domain", "ai.onnx")
    lines = out.splitlines()[:-1]
    assert code == 0 and lines and all("::" not in line.split()[2] for line in lines)
    assert all(line.split()[1] == "import" for line in lines)
    code, out, _ = run(capsys, "ops", "--backend", "torch", "--domain", "com.nowhere")
    assert code == 0 and "no primitives registered in backend 'torch' in domain 'com.nowhere'" in out
