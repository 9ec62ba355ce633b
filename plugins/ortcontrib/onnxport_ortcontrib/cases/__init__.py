"""The plugin's declared test cases, numpy only, shared by the three frameworks' primitives.

onnxruntime has no official node cases for its contrib ops, so each op family declares small
one-node graphs with seeded random inputs here; the testkit runs each in onnxruntime (graph
optimizations off) and in the backend, and compares them with the per-dtype tolerances of the
family's ``TEST_TOLERANCES`` (which each framework's primitive module re-exports). Ops that
onnxruntime's CPU build has no kernel for carry a numpy ``reference`` instead.
"""
