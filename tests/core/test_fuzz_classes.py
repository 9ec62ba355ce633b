"""A short seeded fuzz run per installed backend with the mutation kinds that found earlier
regressions (:mod:`onnxport_testkit.fuzz_mutators_more`): a local function inside a subgraph, an
external location through a file, sizes computed at call time, a declared type that contradicts
the graph, a value read out of scope, initializer data for another type. Every case is a clean
OnnxportError or matches onnxruntime; nothing hangs or blows the memory."""

from __future__ import annotations

import os

import pytest

import onnxport

pytest.importorskip("onnxruntime")
fuzz = pytest.importorskip("onnxport_testkit.fuzz")
from onnxport_testkit.fuzz_mutators_more import MORE  # noqa: E402

CASES = int(os.environ.get("ONNXPORT_FUZZ_CLASS_CASES", "36"))


@pytest.mark.parametrize("backend", onnxport.backends())
def test_fuzz_classes(backend: str, tmp_path) -> None:
    out = fuzz.run(CASES, seed=0, backend=backend, timeout=60.0, memory=1 << 30, folder=tmp_path, mutators=MORE)
    assert sum(out["counts"].values()) == CASES
    assert {m.__name__ for m in MORE} <= set(out["applied"]), out["applied"]
    assert out["counts"].get("error", 0) > CASES // 6, out["counts"]
    report = "\n".join(f"{b['outcome']}: {b['mutations']} -> {b.get('detail', '')}" for b in out["bad"])
    assert not out["bad"], f"{len(out['bad'])} of {CASES} cases failed badly ({out['counts']}):\n{report}"
    # files onnxruntime refuses are refused here too (the core's checks, before the backend)
    assert out["counts"].get("accepted_ort_rejects", 0) == 0, out["counts"]
