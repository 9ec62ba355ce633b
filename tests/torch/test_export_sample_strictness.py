"""Export samples are as strict as the import cases (seeded, per-dtype tolerances, edge magnitudes)."""

from __future__ import annotations

import pytest

from tests._wrong_epsilon import failing_samples


@pytest.mark.parametrize("run", range(3))
def test_a_layer_norm_exported_with_a_wrong_epsilon_fails_its_small_sample(run, monkeypatch) -> None:
    # each run gives the same verdict: the sample's inputs do not depend on the run or the test order
    failing = failing_samples("torch", "aten.layer_norm.default", monkeypatch)
    assert failing["small"], failing
