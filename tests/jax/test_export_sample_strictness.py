"""Export samples are as strict as the import cases (seeded, per-dtype tolerances, edge magnitudes)."""

from __future__ import annotations

import pytest

pytest.importorskip("flax")

from tests._wrong_epsilon import failing_samples  # noqa: E402


def test_a_layer_norm_exported_with_a_wrong_epsilon_fails_its_small_sample(monkeypatch) -> None:
    failing = failing_samples("jax", "lax.onnxport_nnx_layer_norm", monkeypatch)
    assert failing["small"], failing
