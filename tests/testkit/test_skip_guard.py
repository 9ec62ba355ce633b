"""The skip guard (onnxport_testkit.skips, wired in tests/conftest.py): in a tox env a skip needs a
reviewed allowlist entry, and a package the env is meant to have is required."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from onnxport_testkit import skips

ROOT = Path(__file__).resolve().parents[2]


def _report(reason: str, nodeid: str = "t.py::test_x", xfail: bool = False) -> SimpleNamespace:
    rep = SimpleNamespace(skipped=True, longrepr=("t.py", 3, f"Skipped: {reason}"), nodeid=nodeid)
    if xfail:
        rep.wasxfail = reason
    return rep


def test_the_reviewed_allowlist_parses_and_every_entry_says_why() -> None:
    entries = skips.load_allowlist(ROOT / "tests" / "allowed_skips.txt")
    assert len(entries) >= 5
    assert all(len(e.why) > 40 for e in entries)


def test_guard_admits_listed_reasons_per_env_only() -> None:
    allowed = skips.parse_allowlist("envs: torch\nmatch: ^not registered in torch: \nwhy: coverage data\n")
    guard = skips.SkipGuard("torch", allowed)
    guard.record(_report("not registered in torch: Foo"))
    guard.record(_report("could not import 'transformers': No module named 'transformers'", "t.py::test_y"))
    guard.record(_report("expected to fail", xfail=True))  # an xfail is not a skip
    assert guard.listed == 1
    assert guard.unlisted == [("t.py::test_y", "could not import 'transformers': No module named 'transformers'")]
    other = skips.SkipGuard("jax", allowed)
    other.record(_report("not registered in torch: Foo"))
    assert other.listed == 0 and len(other.unlisted) == 1


def test_exchange_entries_do_not_admit_a_missing_backend_in_the_cross_env() -> None:
    entries = skips.load_allowlist(ROOT / "tests" / "allowed_skips.txt")
    guard = skips.SkipGuard("cross", entries)
    guard.record(_report("jax -> torch, mlp: backend 'jax' is not installed: pip install onnxport-jax"))
    guard.record(_report("torch -> jax, control_flow: the torch exporter maps torch.cond to If", "t.py::b"))
    assert [n for n, _ in guard.unlisted] == ["t.py::test_x"] and guard.listed == 1


@pytest.mark.parametrize("text", ["envs: torch\nmatch: x\n", "envs: torch\nwhy: w\n", "match: x\nwhy: w\n",
                                  "envs: torch\nmatch: (\nwhy: w\n", "colour: red\n"])
def test_an_incomplete_entry_is_an_error(text: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - ValueError or re.error
        skips.parse_allowlist(text)


def test_missing_packages() -> None:
    assert skips.missing_packages("numpy onnx") == []
    assert skips.missing_packages("numpy no_such_module_xyz") == ["no_such_module_xyz"]


def test_present_packages() -> None:
    assert skips.present_packages("no_such_module_xyz, other_missing_module") == []
    assert skips.present_packages("numpy no_such_module_xyz") == ["numpy"]


def _run(tmp_path: Path, body: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    """pytest on one file in a folder whose conftest is the suite's own (the guard's wiring)."""
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text().replace(
        'Path(__file__).with_name("allowed_skips.txt")', f"Path({str(ROOT / 'tests' / 'allowed_skips.txt')!r})"))
    (tmp_path / "test_one.py").write_text(body)
    env = {k: v for k, v in os.environ.items() if k not in (skips.ENV_VAR, skips.PACKAGES_VAR, skips.ABSENT_VAR)}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "no:onnxport", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def test_an_unlisted_skip_fails_a_tox_run_and_a_listed_one_passes(tmp_path: Path) -> None:
    body = ("import pytest\n\ndef test_a():\n    pytest.skip('not registered in torch: Foo')\n\n"
            "def test_b():\n    pass\n")
    ok = _run(tmp_path, body, {skips.ENV_VAR: "torch"})
    assert ok.returncode == 0, ok.stdout[-2000:]
    assert "1 allowed skip(s), 0 not allowed" in ok.stdout
    bad = _run(tmp_path, body.replace("not registered in torch: Foo", "no chromedriver"), {skips.ENV_VAR: "torch"})
    assert bad.returncode == 1, bad.stdout[-2000:]
    assert "NOT ALLOWED SKIP" in bad.stdout and "no chromedriver" in bad.stdout
    outside = _run(tmp_path, body.replace("not registered in torch: Foo", "no chromedriver"), {})
    assert outside.returncode == 0, outside.stdout[-2000:]  # outside tox: a skip is a skip


def test_a_missing_env_package_is_an_error(tmp_path: Path) -> None:
    res = _run(tmp_path, "def test_a():\n    pass\n", {skips.ENV_VAR: "torch", skips.PACKAGES_VAR: "numpy no_such_module_xyz"})
    assert res.returncode != 0
    assert "no_such_module_xyz" in res.stdout + res.stderr
