"""The reviewed list of ONNX node cases the TensorFlow backend is expected to fail, with reasons.

Keys are exact node-case names (``test_cast_FLOAT_to_STRING``) or one variant of a case
(``test_abs[float16]``); no substrings, no op-wide entries (a meta-test checks). A listed case
that passes fails the run, so the list cannot go stale. Keep each reason specific: what
TensorFlow lacks, not "doesn't work".
"""

from __future__ import annotations

_E8M0 = ("TensorFlow has no float8e8m0 type and the backend implements no carrier rounding for it "
         "(the exponent-only format with round_mode up/down/nearest); float8e4m3/e5m2, float4 and "
         "int4/int2 are carried exactly")
_RANDOM = "expected values are numpy's random draws; TensorFlow's random ops draw different values (same distribution)"

EXPECTED_FAILURES: dict[str, str] = {
    # -- casts (ops/import_: cast)
    "test_cast_e8m0_FLOAT16_to_FLOAT8E8M0": _E8M0,
    "test_cast_e8m0_FLOAT8E8M0_to_FLOAT": _E8M0,
    "test_cast_e8m0_FLOAT8E8M0_to_FLOAT16": _E8M0,
    "test_cast_e8m0_FLOAT_to_FLOAT8E8M0": _E8M0,
    # -- control flow (ops/import_: control_flow)
    "test_if_opt": "one branch yields an empty optional (None), the other a tensor sequence: tf.cond needs both "
                   "branches to return the same structure and TensorFlow has no optional type",
    # -- image decoding (ops/import_: image_decoder)
    "test_image_decoder_decode_jpeg2k_rgb": "TensorFlow has no JPEG 2000 decoder (tf.io decodes BMP, GIF, PNG, JPEG)",
    "test_image_decoder_decode_pnm_rgb": "TensorFlow has no PNM decoder (tf.io decodes BMP, GIF, PNG, JPEG)",
    "test_image_decoder_decode_tiff_rgb": "TensorFlow has no TIFF decoder (tf.io decodes BMP, GIF, PNG, JPEG)",
    # -- random draws (ops/import_: random, dropout)
    **{name: _RANDOM for name in ("test_bernoulli", "test_bernoulli_double", "test_bernoulli_seed",
                                  "test_bernoulli_expanded", "test_bernoulli_double_expanded",
                                  "test_bernoulli_seed_expanded", "test_training_dropout",
                                  "test_training_dropout_default", "test_training_dropout_default_mask",
                                  "test_training_dropout_mask")},
    # export side (tfexport): export(import(case)) round trips
    "test_cast_BFLOAT16_to_FLOAT[roundtrip]": "[RuntimeError] onnxruntime's Python API takes no bfloat16 numpy inputs: the exported graph cannot be fed",
    "test_castlike_BFLOAT16_to_FLOAT[roundtrip]": "[RuntimeError] onnxruntime's Python API takes no bfloat16 numpy inputs: the exported graph cannot be fed",
    "test_range_bfloat16_type_positive_delta[roundtrip]": "[RuntimeError] onnxruntime's Python API takes no bfloat16 numpy inputs: the exported graph cannot be fed",
    "test_qlinearconv[roundtrip]": "[NotImplemented] the re-exported graph has an integer ONNX Conv, which onnxruntime has no kernel for (not yet traced to which TF op of the imported graph carries the integer convolution)",
    "test_convinteger_with_padding[roundtrip]": "[NotImplemented] the re-exported graph has an integer ONNX Conv, which onnxruntime has no kernel for (not yet traced to which TF op of the imported graph carries the integer convolution)",
    "test_causal_conv_with_state_b1_c1_degenerate[roundtrip]": "[ConversionError] the imported graph slices with bounds computed at run time; the StridedSlice export primitive needs trace-time constant begin/end/strides",
    "test_reshape_allowzero_reordered[roundtrip]": "[Fail] the re-exported graph's second Reshape asks onnxruntime for shape {3,4,4} from a {0,3,4} input: a zero-sized reshape target is lost on the way (not yet found where)",
}
