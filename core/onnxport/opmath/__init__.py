"""Framework-free op maths every backend shares: pads and windows, resize, RNN gates, signal windows,
grid sampling, col2im, slicing, sequences, constants, ML ops and TF-IDF, all in numpy or plain Python."""
