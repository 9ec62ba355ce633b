"""Export clean-up passes: constant folding, no-op removal, window pads, Conv+BN folding, flat MatMuls,
and transposes pushed until pairs cancel."""
