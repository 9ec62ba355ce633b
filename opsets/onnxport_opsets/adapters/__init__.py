"""One module per op family."""
