"""ImageDecoder (opset 20): decodes an encoded image (BMP, JPEG, JPEG 2000, TIFF, PNG, WebP, PNM)
into a uint8 [H, W, C] tensor, RGB, BGR or grayscale. Decoding uses Pillow (the ``image`` extra:
``pip install onnxport-torch[image]``)."""

from __future__ import annotations

import io

import numpy as np
import torch

from onnxport import importer

from ...context import NodeContext

_CHANNELS = {"RGB": 3, "BGR": 3, "Grayscale": 1}


@importer("ImageDecoder", since=20)
def image_decoder(ctx: NodeContext, encoded: torch.Tensor, *, pixel_format: str) -> torch.Tensor:
    """The decoded image [H, W, C]; an empty [0, 0, C] image when the stream does not decode."""
    if pixel_format not in _CHANNELS:
        raise ctx.error(f"unknown pixel_format {pixel_format!r} (expected RGB, BGR or Grayscale)")
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError as exc:
        raise ctx.error("ImageDecoder needs the Pillow package to decode images: "
                        "pip install 'onnxport-torch[image]' (or pillow)") from exc
    if torch.compiler.is_exporting() or torch.compiler.is_compiling():
        raise ctx.error("ImageDecoder decodes the bytes on the host with Pillow; its output shape "
                        "depends on the image, so it cannot be traced (torch.export, torch.compile)")
    data = encoded.detach().cpu().contiguous().numpy().tobytes()
    try:
        with Image.open(io.BytesIO(data)) as img:
            pixels = np.asarray(img.convert("L" if pixel_format == "Grayscale" else "RGB"))
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        # a corrupt stream or an unknown format decodes, as ONNX defines it, to an empty image
        pixels = np.zeros((0, 0, _CHANNELS[pixel_format]), dtype=np.uint8)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixel_format == "BGR":
        pixels = pixels[:, :, ::-1]
    return torch.from_numpy(np.ascontiguousarray(pixels, dtype=np.uint8)).to(encoded.device)
