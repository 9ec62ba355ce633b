"""``onnxport prune`` and ``onnxport info --groups``."""

from __future__ import annotations

import numpy as np
import onnx

from onnxport.edit.surgery import size_groups
from onnxport.tools import cli

from .test_surgery_prune import SHAPES, nets, run


def test_prune_and_info_groups(capsys, tmp_path) -> None:
    src, dst = tmp_path / "m.onnx", tmp_path / "p.onnx"
    src.write_bytes(nets.onnx_bytes("mobilenet", False))
    assert cli.main(["prune", str(src), "--fraction", "0.3", "-o", str(dst)]) == 0
    out = capsys.readouterr().out
    assert "/blocks/blocks.1/body/body.0/Conv: 32 -> 23 channels" in out
    assert "parameters" in out and str(dst) in out
    before = {g.name: g.size for g in size_groups(str(src))}
    after = {g.name: g.size for g in size_groups(str(dst))}
    assert all(after[k] == v - int(0.3 * v) for k, v in before.items() if k.startswith("/blocks"))
    onnx.checker.check_model(str(dst), full_check=True)
    x = np.zeros(SHAPES["mobilenet"], np.float32)
    assert run(onnx.load(dst), x).shape == (2, 5)

    assert cli.main(["info", "--groups", str(dst)]) == 0
    out = capsys.readouterr().out
    assert "size groups" in out and "23 ch  /blocks/blocks.1/body/body.0/Conv" in out
    assert "fixed: it reaches graph output 'y'" in out


def test_prune_errors_are_one_line(capsys, tmp_path) -> None:
    src = tmp_path / "m.onnx"
    src.write_bytes(nets.onnx_bytes("mobilenet", False))
    assert cli.main(["prune", str(src), "--fraction", "1.5", "-o", str(tmp_path / "p.onnx")]) == 1
    assert "SizeAlignmentError: fraction must be in [0, 1)" in capsys.readouterr().err
