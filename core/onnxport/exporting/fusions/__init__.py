"""Pattern fusion on exported graphs: layer/batch norm, softmax, GELU, Gemm, Attention, LSTM from loops."""
