"""The plugin's reviewed expected failures, per backend: exact case key -> ``"[how] reason"``.

Keys of declared import cases are ``com.microsoft::<Op>[<case name>]``; ``how`` is ``mismatch``
(outputs differ) or the exception class the case raises. A listed case that passes fails the run.
"""

_G_IDX_PACKED_ZP = (
    "[mismatch] onnxruntime's MatMulNBits kernel, given g_idx together with packed uint8 zero points, does "
    "not dequantize column k with group g_idx[k]'s zero point, as it does with float zero points or "
    "none (cases g_idx_* and g_idx_float_zp_* pass); the primitive keeps that per-column meaning"
)

_COMMON = {
    "com.microsoft::MatMulNBits[g_idx_packed_zp_f32]": _G_IDX_PACKED_ZP,
    "com.microsoft::MatMulNBits[g_idx_packed_zp_f16]": _G_IDX_PACKED_ZP,
}

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "torch": dict(_COMMON),
    "jax": dict(_COMMON),
    "tensorflow": dict(_COMMON),
}
