"""The plugin's reviewed expected failures, per backend: exact case key -> ``"[how] reason"``.

Keys of declared import cases are ``com.microsoft::<Op>[<case name>]``; ``how`` is ``mismatch``
(outputs differ) or the exception class the case raises. A listed case that passes fails the run.
"""

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "torch": {},
    "jax": {},
    "tensorflow": {},
}
