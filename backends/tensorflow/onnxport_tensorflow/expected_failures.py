"""The reviewed list of ONNX node cases the TensorFlow backend is expected to fail, with reasons.

Keys are exact node-case names (``test_cast_FLOAT_to_STRING``) or one variant of a case
(``test_abs[float16]``); no substrings, no op-wide entries (a meta-test checks). A listed case
that passes fails the run, so the list cannot go stale. Keep each reason specific: what
TensorFlow lacks, not "doesn't work".
"""

from __future__ import annotations

EXPECTED_FAILURES: dict[str, str] = {
}
