"""Large weights of a model file read in place: the file's bytes become framework tensors once.

Parsing a model file with protobuf holds every weight twice before a framework copies it once
more (the file's bytes, the parsed message, the framework tensor). For an import,
:func:`in_place_model` instead walks the file's protobuf wire format (memory-mapped, never read
whole) and rewrites each large initializer of the main graph, whose ``raw_data`` holds exactly
the bytes its type and shape need, into an external-data reference to the model file itself
(the offset of those bytes in the file). The small remainder is parsed and validated as any
model is; backends then read each weight straight from the file into their own tensor
(:func:`read_external`).
"""

from __future__ import annotations

import math
import mmap
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import onnx_ir as ir
from onnx import TensorProto

from ..errors import ModelError
from . import validate as _validate

#: initializers with fewer raw bytes than this stay inline (reading them one by one costs more)
IN_PLACE_BYTES = 1 << 16
_GRAPH, _INITIALIZER = 7, 5  # ModelProto.graph, GraphProto.initializer
_RAW, _EXTERNAL, _LOCATION = 9, 13, 14  # TensorProto.raw_data, .external_data, .data_location
_DATA_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


class _Malformed(Exception):
    """The wire format is not what a well-formed model holds: the normal parse reports it."""


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf, start: int, end: int):
    """(field number, wire type, field start, payload start, payload end) of each field."""
    pos = start
    while pos < end:
        begin = pos
        tag, pos = _varint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = _varint(buf, pos, end)
            yield number, wire, begin, pos, pos
            continue
        if wire == 2:
            length, pos = _varint(buf, pos, end)
            payload = pos
            pos += length
        elif wire == 1:
            payload, pos = pos, pos + 8
        elif wire == 5:
            payload, pos = pos, pos + 4
        else:  # groups are not used by ONNX
            raise _Malformed
        if pos > end:
            raise _Malformed
        yield number, wire, begin, payload, pos


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _length_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | 2) + _encode_varint(len(payload)) + payload


def _entry(key: str, value: str) -> bytes:
    """One ``StringStringEntryProto`` of ``TensorProto.external_data``."""
    return _length_field(_EXTERNAL, _length_field(1, key.encode()) + _length_field(2, value.encode()))


def _tensor(buf, start: int, end: int, location: str) -> bytes | None:
    """The initializer at ``buf[start:end]`` with its raw data as a reference into the file, or
    None to keep it as it is (small, or anything a validation would have to judge)."""
    raw = None
    kept = bytearray()
    for number, wire, begin, payload, stop in _fields(buf, start, end):
        if number == _RAW and wire == 2 and raw is None:
            raw = (payload, stop)
        elif number in (_RAW, _EXTERNAL, _LOCATION, 3):  # a second raw_data, external data, segments
            return None
        else:
            kept += buf[begin:stop]
    if raw is None or raw[1] - raw[0] < IN_PLACE_BYTES:
        return None
    t = TensorProto.FromString(bytes(kept))
    if (t.data_type == TensorProto.STRING or t.data_type not in _validate._KNOWN_DTYPES
            or any(d < 0 for d in t.dims) or any(len(getattr(t, f)) for f in _DATA_FIELDS)
            or math.ceil(math.prod(t.dims) * _validate._bits(t.data_type) / 8) != raw[1] - raw[0]):
        return None  # the normal path validates it and names what is wrong
    kept += _entry("location", location) + _entry("offset", str(raw[0])) + _entry("length", str(raw[1] - raw[0]))
    kept += _encode_varint(_LOCATION << 3) + _encode_varint(TensorProto.EXTERNAL)
    return bytes(kept)


def _graph(buf, start: int, end: int, location: str) -> tuple[bytes, int]:
    out = bytearray()
    moved = 0
    for number, wire, begin, payload, stop in _fields(buf, start, end):
        new = _tensor(buf, payload, stop, location) if number == _INITIALIZER and wire == 2 else None
        if new is None:
            out += buf[begin:stop]
        else:
            out += _length_field(_INITIALIZER, new)
            moved += 1
    return bytes(out), moved


def in_place_model(path: str | os.PathLike) -> onnx.ModelProto | None:
    """The model at ``path`` with its large main-graph initializers referring to their bytes in the
    file itself (``location`` is the file's own name; its folder is ``Path(path).resolve().parent``),
    or None when there is nothing to move or the wire format is unusual: then the file is parsed
    as it is, and its validation reports what is wrong."""
    path = Path(path).resolve()
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < IN_PLACE_BYTES:
                return None
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                out = bytearray()
                graphs = moved = 0
                for number, wire, begin, payload, stop in _fields(buf, 0, size):
                    if number == _GRAPH and wire == 2:
                        graphs += 1
                        graph, moved = _graph(buf, payload, stop, path.name)
                        out += _length_field(_GRAPH, graph)
                    else:
                        out += buf[begin:stop]
    except (_Malformed, OSError, ValueError, IndexError):
        return None
    if graphs != 1 or not moved:
        return None  # protobuf merges repeated messages: such a file is parsed as it is
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(bytes(out))
    except Exception:  # noqa: BLE001 - the normal parse of the file reports it
        return None
    return proto


DT = ir.DataType
#: types whose bytes in a file are the bytes of a numpy array or framework tensor as they are
PLAIN_TYPES = frozenset({DT.FLOAT, DT.DOUBLE, DT.FLOAT16, DT.BFLOAT16, DT.INT8, DT.INT16, DT.INT32, DT.INT64,
                         DT.UINT8, DT.UINT16, DT.UINT32, DT.UINT64})


def readable(tensor: ir.TensorProtocol) -> bool:
    """Whether :func:`read_external` can copy ``tensor`` from its file into a buffer of its type."""
    return (isinstance(tensor, ir.ExternalTensor) and tensor.dtype in PLAIN_TYPES and sys.byteorder == "little"
            and tensor.size > 0)


def read_array(tensor: ir.ExternalTensor) -> np.ndarray:
    """An external tensor (:func:`readable`) as a numpy array of its own: the file is read into it,
    never mapped (a mapping would tie the array to the file, and count its pages twice)."""
    arr = aligned_empty(tuple(tensor.shape.numpy()), tensor.dtype.numpy())
    read_external(tensor, memoryview(arr.reshape(-1).view(np.uint8)))
    return arr


#: the alignment of arrays read from a file: a framework that adopts aligned host memory
#: instead of copying it (JAX's ``device_put`` on CPU) then holds the weights once
ALIGNMENT = 64


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on an :data:`ALIGNMENT` boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _open(tensor: ir.ExternalTensor):
    """The tensor's file, opened for reading; an OS refusal is a :class:`ModelError` naming it."""
    try:
        return open(tensor.path, "rb")
    except OSError as exc:
        raise ModelError(f"external data of tensor {tensor.name!r}: cannot open {tensor.location!r}: "
                         f"{exc.strerror or type(exc).__name__}") from exc


def read_external(tensor: ir.ExternalTensor, out: memoryview) -> None:
    """Read an external tensor's bytes (checked at load) straight into ``out`` (its size)."""
    with _open(tensor) as f:
        f.seek(tensor.offset or 0)
        _fill(f, out.cast("B"), tensor)


def _fill(f, view: memoryview, tensor: ir.ExternalTensor) -> None:
    """Read ``len(view)`` bytes of ``f`` into ``view``."""
    done = 0
    while done < len(view):
        n = f.readinto(view[done:])
        if not n:
            raise ModelError(f"external data of tensor {tensor.name!r}: the file {tensor.location!r} "
                             f"ends {len(view) - done} bytes early")
        done += n


def read_row_blocks(tensor: ir.ExternalTensor, block_bytes: int = 16 << 20) -> Iterator[tuple[int, np.ndarray]]:
    """An external tensor (:func:`readable`, at least 1-D) read in blocks of whole rows of its first
    axis: ``(first_row, rows)`` pairs, ``rows`` one reused buffer of about ``block_bytes``, for a
    framework that fills its own tensor piece by piece without holding the whole array twice."""
    shape = tuple(int(d) for d in tensor.shape.numpy())
    dtype = np.dtype(tensor.dtype.numpy())
    row_bytes = max(1, math.prod(shape[1:]) * dtype.itemsize)
    per_block = max(1, block_bytes // row_bytes)
    buf = np.empty((min(per_block, shape[0]), *shape[1:]), dtype=dtype)
    with _open(tensor) as f:
        f.seek(tensor.offset or 0)
        for first in range(0, shape[0], per_block):
            rows = buf[:min(per_block, shape[0] - first)]
            _fill(f, memoryview(rows.reshape(-1).view(np.uint8)), tensor)
            yield first, rows
