"""Progress bars: shown on a terminal for long imports, exports, saves and conversions, never elsewhere."""

from __future__ import annotations

import io
import sys

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import onnxport
from onnxport import progress

from ..conftest import make_model, tensor_info


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _terminal(monkeypatch) -> _Terminal:
    """stderr as a terminal for the rest of the test (set in the test body: pytest's capture
    replaces sys.stderr again after fixtures run); every task counts as long."""
    pytest.importorskip("tqdm")
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    return err


def _model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    return make_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                      [tensor_info("x", [2, 4])], [tensor_info("y", [2, 4])], [w])


def test_import_export_and_save_show_their_stages_on_a_terminal(monkeypatch, tmp_path) -> None:
    torch = pytest.importorskip("torch")
    terminal = _terminal(monkeypatch)
    module = onnxport.import_model(_model(), backend="torch")
    out = terminal.getvalue()
    assert "import (torch): load" in out and "import (torch): build" in out
    exported = onnxport.export_model(module, (torch.ones(2, 4),))
    out = terminal.getvalue()
    assert "export (torch): trace" in out and "export (torch): check" in out  # the core pipeline's stages
    onnxport.save(exported, tmp_path / "m.onnx", external_data=True)
    assert "saving m.onnx" in terminal.getvalue()


def test_no_bar_off_a_terminal_or_when_disabled(monkeypatch, tmp_path) -> None:
    pytest.importorskip("tqdm")
    err = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    onnxport.save(onnxport.load(_model().SerializeToString()), tmp_path / "m.onnx", external_data=True)
    assert err.getvalue() == ""
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    onnxport.save(onnxport.load(_model().SerializeToString()), tmp_path / "n.onnx", external_data=True)
    assert term.getvalue() == ""


def test_short_tasks_draw_nothing_and_nested_tasks_draw_one_bar(monkeypatch) -> None:
    term = _terminal(monkeypatch)
    monkeypatch.setattr(progress, "DELAY", 60.0)
    with progress.task("quick", total=2) as step:  # a task shorter than the delay draws nothing
        step("a")
        step("b")
    assert term.getvalue() == ""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.task("outer", total=2) as step:
        step("first")
        with progress.task("inner", total=5) as inner:
            inner("deep")
            progress.stage("deeper")
        step("second")
    out = term.getvalue()
    assert "outer: first" in out and "outer: inner: deep" in out and "outer: inner: deeper" in out
    assert "outer: second" in out and "\rinner" not in out  # the inner task draws no bar of its own
    progress.stage("nothing runs")  # no task: no effect, no error
