"""Core ATen ops the torch exporter does not cover, and why (reviewed list).

``exporter.check_supported`` adds the reason to its error when a model uses one of them.
Keys are ATen op packets (``aten.foo``) or full overload names.
"""

from __future__ import annotations

#: op -> reason it has no export primitive
UNSUPPORTED: dict[str, str] = {
    # data-dependent output shapes: ONNX can express some, but torch.export needs user hints
    "aten.nonzero": "data-dependent output shape (boolean masks); not traced without hints",
    "aten.masked_select": "data-dependent output shape",
    "aten._unique2": "data-dependent output shape",
    "aten.index_put": "in-place style writes through advanced indices: ScatterND rewrite not done",
    # training-time ops: export the module in eval mode
    "aten._native_batch_norm_legit_functional": "training-mode batch norm; call module.eval() before export",
    "aten._native_batch_norm_legit": "batch norm without running stats (track_running_stats=False) not supported",
    "aten.native_dropout": "training-mode dropout; call module.eval() before export",
    "aten.bernoulli": "random sampling has no deterministic ONNX equivalent",
    "aten.rand": "random sampling has no deterministic ONNX equivalent",
    "aten.randn": "random sampling has no deterministic ONNX equivalent",
    "aten.randperm": "random sampling has no deterministic ONNX equivalent",
    # pooling and resampling variants
    "aten.max_pool2d_with_indices_backward": "backward op",
    "aten.max_pool3d_with_indices": "3-D pooling not covered yet",
    "aten.avg_pool1d": "decomposes upstream in most versions; 1-D/3-D pooling not covered yet",
    "aten.avg_pool3d": "3-D pooling not covered yet",
    "aten._adaptive_avg_pool3d": "3-D pooling not covered yet",
    "aten.adaptive_max_pool2d": "adaptive max pooling with uneven windows has no ONNX op",
    "aten.upsample_bicubic2d": "cubic resize differs from torch at the borders (cubic_coeff_a, exclude_outside)",
    "aten.grid_sampler_2d": "GridSample exists from opset 16 but is not mapped yet",
    "aten.col2im": "Col2Im (opset 18) not mapped yet",
    "aten.im2col": "no ONNX op",
    # element-wise ops rarely seen in exported nets
    "aten.atan2": "not mapped yet",
    "aten.fmod": "not mapped yet (remainder is)",
    "aten.bitwise_xor": "not mapped yet",
    "aten.logical_xor": "not mapped yet",
    "aten.trunc": "not mapped yet",
    "aten.expm1": "not mapped yet",
    "aten.sinh": "not mapped yet", "aten.cosh": "not mapped yet", "aten.asinh": "not mapped yet",
    "aten.acosh": "not mapped yet", "aten.atanh": "not mapped yet", "aten.asin": "not mapped yet",
    "aten.acos": "not mapped yet", "aten.atan": "not mapped yet", "aten.tan": "not mapped yet",
    "aten.isinf": "not mapped yet",
    "aten.any": "not mapped yet", "aten.logical_not": "",
    # layout / memory ops with no ONNX meaning
    "aten.as_strided": "arbitrary strides have no ONNX equivalent",
    "aten.empty_strided": "uninitialized memory: only meaningful when overwritten in place",
    "aten.copy": "in-place copies are functionalized away; a remaining copy means mutation of an input",
    "aten.resize_": "in-place resize",
    # sorting and scans
    "aten.sort": "stable sort not mapped yet (TopK covers k-largest)",
    "aten.cumprod": "no ONNX op",
    "aten.native_group_norm_backward": "backward op",
    # linear algebra, FFT, complex
    "aten._fft_r2c": "DFT mapping not done", "aten._fft_c2r": "DFT mapping not done",
    "aten._fft_c2c": "DFT mapping not done",
    "aten._linalg_det": "Det exists, not mapped yet",
    "aten.linalg_vector_norm": "not mapped yet",
    "aten.diagonal": "view with strides; not mapped yet",
    "aten.pixel_shuffle": "decomposes upstream in most versions; DepthToSpace mapping not done",
    # higher-order ops
    "higher_order.scan": "Scan mapping not done",
    "higher_order.map_impl": "not mapped yet",
}
UNSUPPORTED = {k: v for k, v in UNSUPPORTED.items() if v}
