"""Op facts declared once (onnxport.plugin.opfacts): the derived sets every consumer reads."""

from __future__ import annotations

from onnxport.plugin.opfacts import facts


def test_custom_domains_have_no_facts():
    assert facts("Dropout").random and not facts("Dropout", "com.example").random
    assert facts("Relu") == facts("Unknown")
