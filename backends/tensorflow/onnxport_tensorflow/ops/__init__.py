"""Primitives of the TensorFlow backend, one file per op family."""
