"""Mutated models (seven seeds, one to three mutations each): every failure is a clear OnnxportError.

``ONNXPORT_FUZZ_CASES`` (default 300) and ``ONNXPORT_FUZZ_SEED`` (default 0) choose the run;
``python -m onnxport_testkit.fuzz --cases 5000`` runs more and prints every bad case.
"""

from __future__ import annotations

import os

import pytest

from onnxport_testkit import fuzz

pytest.importorskip("onnxruntime")


def test_fuzzed_models_fail_cleanly_or_match_onnxruntime(tmp_path):
    cases = int(os.environ.get("ONNXPORT_FUZZ_CASES", "300"))
    seed = int(os.environ.get("ONNXPORT_FUZZ_SEED", "0"))
    out = fuzz.run(cases, seed=seed, backend="torch", timeout=20.0, memory=1 << 30, folder=tmp_path)
    assert sum(out["counts"].values()) == cases
    # the run exercised every path: clean refusals and accepted models equal to onnxruntime
    assert out["counts"].get("error", 0) > cases // 10, out["counts"]
    assert out["counts"].get("match", 0) > cases // 10, out["counts"]
    report = "\n".join(f"{b['outcome']}: {b['mutations']} -> {b.get('detail', '')}" for b in out["bad"])
    assert not out["bad"], f"{len(out['bad'])} of {cases} cases failed badly ({out['counts']}):\n{report}"


def test_fuzz_cases_are_deterministic():
    a, _ = fuzz.make_case(17, 0)
    b, _ = fuzz.make_case(17, 0)
    assert a.proto.SerializeToString() == b.proto.SerializeToString()
