"""The exchange section of the coverage dashboard: the 3x3 matrix per model from the reports'
``exchange`` rows (tests/test_exchange.py)."""

from __future__ import annotations

import json

from onnxport.tools import cli, coverage


def _report(rows: list[dict]) -> dict:
    return {"onnx": "t", "registry": {"torch": {"import": [], "export": []}}, "results": [], "exchange": rows}


def _row(model: str, s: str, t: str, status: str, check: str = "", message: str = "") -> dict:
    return {"model": model, "source": s, "target": t, "status": status, "check": check, "message": message,
            "max_diff": None}


def test_matrix_per_model_from_several_reports(tmp_path) -> None:
    a = _report([_row("mlp", "torch", "jax", "passed"), _row("mlp", "jax", "torch", "not_run", "backend", "pip")])
    b = _report([_row("mlp", "jax", "torch", "failed", "outputs", "Mismatch <x>"),
                 _row("cnn", "torch", "tensorflow", "xfailed", "param_count", "reviewed")])
    (tmp_path / "testkit-a.json").write_text(json.dumps(a))
    (tmp_path / "testkit-b.json").write_text(json.dumps(b))
    cov = coverage.from_reports([tmp_path], [21])
    assert cov.exchange["mlp"][("jax", "torch")]["status"] == "failed"  # a run beats not-run
    md = coverage.to_markdown(cov, 21)
    assert "### mlp" in md and "| from \\ to | torch | jax | tensorflow |" in md
    assert "| jax | FAIL outputs | not run | not run |" in md
    assert "| torch | not run | pass | not run |" in md
    assert "| torch | not run | not run | xfail param_count |" in md
    out = tmp_path / "page.html"
    assert cli.main(["coverage", "--report", str(tmp_path), "-o", str(out)]) == 0
    page = out.read_text()
    assert '<td class="failing" title="Mismatch &lt;x&gt;">FAIL outputs</td>' in page
    assert '<td class="tested-passing" title="">pass</td>' in page
    assert json.loads(coverage.to_json(cov))["exchange"]["cnn"]["torch->tensorflow"]["check"] == "param_count"


def test_no_exchange_rows_no_section(tmp_path) -> None:
    (tmp_path / "testkit-a.json").write_text(json.dumps(_report([])))
    cov = coverage.from_reports([tmp_path], [21])
    assert "Exchange" not in coverage.to_markdown(cov, 21)
