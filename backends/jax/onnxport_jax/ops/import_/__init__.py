"""Import primitives: one ONNX op (family) -> jax.numpy / jax.lax, one file each."""
