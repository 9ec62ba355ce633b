"""ImageDecoder (opset 20): encoded image bytes -> uint8 [H, W, C] with ``tf.io`` decoders.

TensorFlow decodes BMP, GIF, PNG and JPEG inside the graph (JPEG with the accurate integer
DCT, as libjpeg's default); JPEG 2000, TIFF, WebP and PNM streams have no TensorFlow decoder.
"""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor

_CHANNELS = {"RGB": 3, "BGR": 3, "Grayscale": 1}


@importer("ImageDecoder", since=20)
def image_decoder(ctx, encoded_stream, *, pixel_format):
    """Decode BMP, GIF, PNG or JPEG bytes in RGB, BGR or Grayscale order."""
    if pixel_format not in _CHANNELS:
        raise ctx.error(f"unknown pixel_format {pixel_format!r} (one of 'RGB', 'BGR', 'Grayscale')")
    channels = _CHANNELS[pixel_format]
    stream = tf.reshape(tf.cast(tensor(encoded_stream), tf.int32), [-1])
    table = tf.constant([bytes([i]) for i in range(256)], tf.string)
    blob = tf.strings.reduce_join(tf.gather(table, stream))  # the bytes as one scalar string
    is_jpeg = tf.strings.substr(blob, 0, 2) == b"\xff\xd8"
    pixels = tf.cond(
        is_jpeg,
        lambda: tf.io.decode_jpeg(blob, channels=channels, dct_method="INTEGER_ACCURATE"),
        lambda: tf.io.decode_image(blob, channels=channels, expand_animations=False),
    )
    if pixel_format == "BGR":
        pixels = tf.reverse(pixels, [-1])
    return pixels

