"""The contrib ops' torch import primitives, one file per op family."""
