"""Op facts declared once (onnxport.plugin.opfacts): the derived sets every consumer reads."""

from __future__ import annotations

from onnxport.exporting.passes import optimize
from onnxport.importing import plan as driver
from onnxport.plugin.opfacts import NO_FOLD_OPS, RANDOM_OPS, SETTING_INPUTS, STATISTICS_INPUTS, facts


def test_derived_sets():
    assert RANDOM_OPS == {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                          "Bernoulli", "Multinomial", "Dropout"}
    assert NO_FOLD_OPS == RANDOM_OPS | {"If", "Loop", "Scan", "SequenceMap"}
    assert ("Resize", 2) in SETTING_INPUTS and ("Dropout", 1) in SETTING_INPUTS and ("Conv", 1) not in SETTING_INPUTS
    assert STATISTICS_INPUTS == {("BatchNormalization", 3), ("BatchNormalization", 4)}


def test_consumers_read_the_same_facts():
    assert driver.NO_FOLD_OPS is NO_FOLD_OPS and driver.RANDOM_OPS is RANDOM_OPS
    assert optimize._NO_FOLD == NO_FOLD_OPS | {"Constant"}


def test_custom_domains_have_no_facts():
    assert facts("Dropout").random and not facts("Dropout", "com.example").random
    assert facts("Relu") == facts("Unknown")
