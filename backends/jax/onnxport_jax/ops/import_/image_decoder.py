"""ImageDecoder (opset 20): encoded image bytes -> uint8 [H, W, C] via Pillow (the ``image`` extra).

Decoding runs on the host and the image size depends on the bytes, so the stream must be concrete:
under ``jax.jit`` the node raises the context's DataDependentError. A stream that cannot be decoded
gives an empty [0, 0, C] image, as the spec says.
"""

from __future__ import annotations

import io

import jax.numpy as jnp
import numpy as np

from onnxport import importer

_FORMATS = {"RGB": ("RGB", 3), "BGR": ("RGB", 3), "Grayscale": ("L", 1)}


@importer("ImageDecoder", since=20)
def image_decoder(ctx, encoded_stream, *, pixel_format):
    """Decode BMP, JPEG, JPEG 2000, TIFF, PNG, WebP or PNM bytes in RGB, BGR or Grayscale order."""
    if pixel_format not in _FORMATS:
        raise ctx.error(f"unknown pixel_format {pixel_format!r} (one of 'RGB', 'BGR', 'Grayscale')")
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError as exc:
        raise ctx.error("ImageDecoder needs Pillow: pip install 'onnxport-jax[image]' (or pillow)") from exc
    data = ctx.concrete(encoded_stream, "the decoded image size")
    mode, channels = _FORMATS[pixel_format]
    try:
        with Image.open(io.BytesIO(np.asarray(data, np.uint8).tobytes())) as img:
            pixels = np.asarray(img.convert(mode), np.uint8)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        pixels = np.zeros((0, 0, channels), np.uint8)
    pixels = pixels.reshape(pixels.shape[0], pixels.shape[1], channels)
    if pixel_format == "BGR":
        pixels = np.ascontiguousarray(pixels[:, :, ::-1])
    return pixels if ctx.is_static(encoded_stream) else jnp.asarray(pixels)
