"""Import and export primitives of the torch backend, one file per op family."""
