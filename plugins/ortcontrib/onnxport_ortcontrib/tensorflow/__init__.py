"""The contrib ops' TensorFlow import primitives, one file per op family."""
