"""Import primitives of the JAX backend, one file per op family."""
