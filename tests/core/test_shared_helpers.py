"""Framework-free helpers every backend's primitives share: mel filters and conv/pool settings."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from onnxport.opmath.pads import explicit_pads, resolve_pads, spatial_settings
from onnxport.opmath.signal import mel_weight_matrix


@pytest.mark.parametrize("args", [(8, 16, 8192, 0.0, 4096.0), (5, 33, 16000, 30.0, 7000.0), (3, 8, 100, 1.0, 49.0)])
def test_mel_weight_matrix_matches_the_onnx_reference(args):
    node = onnx.helper.make_node("MelWeightMatrix", ["n", "d", "r", "lo", "hi"], ["y"])
    ref = ReferenceEvaluator(node)
    n, d, r, lo, hi = args
    (want,) = ref.run(None, {"n": np.int64(n), "d": np.int64(d), "r": np.int64(r),
                             "lo": np.float32(lo), "hi": np.float32(hi)})
    got = mel_weight_matrix(n, d, r, lo, hi)
    assert got.shape == (d // 2 + 1, n)
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_mel_weight_matrix_rejects_empty_sizes():
    with pytest.raises(ValueError, match="must be positive"):
        mel_weight_matrix(0, 16, 8000, 0.0, 4000.0)


def test_conv_pool_settings_defaults():
    assert spatial_settings(2, (3, 3), None, None) == ([3, 3], [1, 1], [1, 1])
    assert spatial_settings(1, [2], [2], [3]) == ([2], [2], [3])
    assert explicit_pads(None, 2) == [0, 0, 0, 0] and explicit_pads((1, 2, 3, 4), 2) == [1, 2, 3, 4]
    assert resolve_pads("NOTSET", [1, 1, 2, 2], [5, 5], [3, 3], [1, 1], [1, 1]) == [1, 1, 2, 2]
    assert resolve_pads("VALID", [1, 1, 2, 2], [5, 5], [3, 3], [1, 1], [1, 1]) == [0, 0, 0, 0]
    # SAME_UPPER: output = ceil(5 / 2) = 3, total pad = (3 - 1) * 2 + 3 - 5 = 2 -> 1 / 1; 4 -> odd end
    assert resolve_pads("SAME_UPPER", None, [5, 4], [3, 2], [2, 1], [1, 1]) == [1, 0, 1, 1]
    assert resolve_pads("SAME_LOWER", None, [4], [2], [1], [1]) == [1, 0]
