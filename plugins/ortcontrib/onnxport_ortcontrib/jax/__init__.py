"""The contrib ops' JAX import primitives, one file per op family."""
