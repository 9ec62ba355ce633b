"""The reviewed list of ONNX node cases the TensorFlow backend is expected to fail, with reasons.

Keys are exact node-case names (``test_cast_FLOAT_to_STRING``) or one variant of a case
(``test_abs[float16]``); no substrings, no op-wide entries (a meta-test checks). A listed case
that passes fails the run, so the list cannot go stale. Keep each reason specific: what
TensorFlow lacks, not "doesn't work".
"""

from __future__ import annotations

EXPECTED_FAILURES: dict[str, str] = {
    # export side (tfexport): export(import(case)) round trips
    "test_cast_BFLOAT16_to_FLOAT[roundtrip]": "onnxruntime's Python API takes no bfloat16 numpy inputs: the exported graph cannot be fed",
    "test_castlike_BFLOAT16_to_FLOAT[roundtrip]": "onnxruntime's Python API takes no bfloat16 numpy inputs: the exported graph cannot be fed",
    "test_range_bfloat16_type_positive_delta[roundtrip]": "onnxruntime's Python API takes no bfloat16 numpy inputs: the exported graph cannot be fed",
    "test_qlinearconv[roundtrip]": "the re-exported graph has an integer ONNX Conv, which onnxruntime has no kernel for (not yet traced to which TF op of the imported graph carries the integer convolution)",
    "test_convinteger_with_padding[roundtrip]": "the re-exported graph has an integer ONNX Conv, which onnxruntime has no kernel for (not yet traced to which TF op of the imported graph carries the integer convolution)",
    "test_causal_conv_with_state_b1_c1_degenerate[roundtrip]": "the imported graph slices with bounds computed at run time; the StridedSlice export primitive needs trace-time constant begin/end/strides",
    "test_reshape_allowzero_reordered[roundtrip]": "the re-exported graph's second Reshape asks onnxruntime for shape {3,4,4} from a {0,3,4} input: a zero-sized reshape target is lost on the way (not yet found where)",
    "export:StatelessWhile[data_dependent-roundtrip]": "the TF importer needs the rank of every Loop-body value; the condition re-run at the end of the exported body reads a value whose rank the body subgraph does not record",
    "test_basic_conv_with_padding[roundtrip]": "the re-exported graph (weights fixed as constants) has a value_info without an element type, which onnx.checker rejects; not yet found which rewrite leaves it untyped",
}
