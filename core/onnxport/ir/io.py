"""Loading and saving models: untrusted input is checked before it reaches onnx-ir."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import onnx
import onnx_ir as ir
from google.protobuf.message import DecodeError

from .. import progress as _progress
from ..errors import ModelError, UnsafeModelError
from . import deserialize as _deserialize
from . import filedata as _filedata
from . import validate as _validate

ModelLike = "str | os.PathLike | bytes | onnx.ModelProto | ir.Model"

_MAX_BYTES = 2**31 - 1  # protobuf's own limit for one message


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from graph.initializer
    for sp in graph.sparse_initializer:
        yield sp.values
        yield sp.indices
    for node in graph.node:
        if node.attribute:
            yield from _attr_tensors(node.attribute)


def _attr_tensors(attrs) -> Iterator[onnx.TensorProto]:
    for attr in attrs:
        if attr.HasField("t"):
            yield attr.t
        yield from attr.tensors
        if attr.HasField("g"):
            yield from _tensors(attr.g)
        for g in attr.graphs:
            yield from _tensors(g)


def _all_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    yield from _tensors(model.graph)
    for fn in model.functions:
        for node in fn.node:
            if node.attribute:
                yield from _attr_tensors(node.attribute)


_MAX_NAME = 4096


def check_external_data(model: onnx.ModelProto, base_dir: str | os.PathLike | None,
                        own_file: Path | None = None) -> None:
    """Refuse external data that points outside the model's folder, or that is missing or short
    (``own_file``: the model's own file, whose weights an import reads in place)."""
    root = Path(base_dir).resolve() if base_dir is not None else None
    external = onnx.TensorProto.EXTERNAL
    for tensor in _all_tensors(model):
        if tensor.data_location != external:
            continue
        info = {e.key: e.value for e in tensor.external_data}
        if not all(isinstance(t, str) for kv in info.items() for t in kv):  # protobuf keeps bad UTF-8 as bytes
            raise ModelError(f"external data of tensor {tensor.name!r}: an entry is not valid UTF-8 text")
        location = info.get("location", "")
        what = f"external data of tensor {tensor.name!r} (location {location[:200]!r})"
        if root is None:
            raise UnsafeModelError(
                f"{what}: the model was given as bytes/proto, so there is no folder to read "
                "external data from; load it from its path instead"
            )
        if "\x00" in location:
            raise UnsafeModelError(f"{what}: the location holds a null byte")
        if len(location) > _MAX_NAME or any(len(p) > 255 for p in Path(location).parts):
            raise UnsafeModelError(f"{what}: the location is longer than a file name may be")
        if not location or os.path.isabs(location) or Path(location).drive:
            raise UnsafeModelError(f"{what}: absolute or empty locations are refused")
        if ".." in Path(location).parts:
            raise UnsafeModelError(f"{what}: locations with '..' are refused")
        try:
            # the path as the OS reads it (pathlib would drop the '.' parts of 'w.bin/./.', which the
            # OS refuses: a file is no folder), then where it leads
            os.stat(os.path.join(root, location))
            target = (root / location).resolve(strict=True)
            st = target.stat()
        except RuntimeError as exc:  # a symlink loop on Python < 3.13
            raise UnsafeModelError(f"{what}: {exc}") from exc
        except OSError as exc:
            raise ModelError(f"{what}: cannot open {location[:200]!r} in {str(root)!r} (it does not exist or is unreadable): "
                             f"{exc.strerror or type(exc).__name__}") from exc
        if root != target and root not in target.parents:
            raise UnsafeModelError(f"{what}: resolves outside the model's folder {str(root)!r}")
        if not target.is_file():
            raise ModelError(f"{what}: {str(target)!r} is not a regular file")
        if st.st_nlink > 1 and target != own_file:
            raise UnsafeModelError(f"{what}: the file has {st.st_nlink} hard links; it may be a file from "
                                   "outside the model's folder")
        size = st.st_size
        try:
            offset = int(info.get("offset", 0) or 0)
            length = int(info["length"]) if "length" in info else size - offset
        except ValueError as exc:
            raise ModelError(f"{what}: offset/length are not integers") from exc
        if offset < 0 or length < 0 or offset + length > size:
            raise ModelError(
                f"{what}: offset {offset} + length {length} exceeds the file's {size} bytes"
            )
        need = _validate.tensor_nbytes(tensor)
        if length != need:
            raise ModelError(f"{what}: {length} bytes, the tensor's type and shape need {need}")


def external_base_dir(model: ir.Model) -> str | None:
    """The one folder the external tensors of an IR model read from (``None`` if they have none)."""
    dirs = set()
    for graph in (model.graph, *(f.graph for f in model.functions.values())):
        for node in ir.traversal.RecursiveGraphIterator(graph):
            for attr in node.attributes.values():
                if attr.type == ir.AttributeType.TENSOR and isinstance(attr.value, ir.ExternalTensor):
                    dirs.add(str(attr.value.base_dir))
        for v in graph.initializers.values():
            if isinstance(v.const_value, ir.ExternalTensor):
                dirs.add(str(v.const_value.base_dir))
    if len(dirs) > 1:
        raise UnsafeModelError(f"the model's external data lies in several folders: {sorted(dirs)}")
    return dirs.pop() if dirs else None


def _parse(data: bytes, origin: str) -> onnx.ModelProto:
    if not data:
        raise ModelError(f"{origin}: empty model file")
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ModelError(f"{origin}: not a valid ONNX model (truncated or corrupted): {exc}") from exc
    if not proto.HasField("graph"):
        raise ModelError(f"{origin}: the file parses but holds no graph; is it an ONNX model?")
    return proto


def load_proto(source, base_dir: str | os.PathLike | None = None,
               in_place: bool = False) -> tuple[onnx.ModelProto, str | None]:
    """Parse a path, bytes or ModelProto into a checked ModelProto and its folder; ``in_place``:
    a file's large weights stay in the file, as external data read at import
    (:mod:`onnxport.ir.filedata`)."""
    own_file = None
    if isinstance(source, onnx.ModelProto):
        proto, origin = source, "<ModelProto>"
    elif isinstance(source, (bytes, bytearray, memoryview)):
        proto, origin = _parse(bytes(source), "<bytes>"), "<bytes>"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        origin = str(path)
        try:
            size = path.stat().st_size
            if size > _MAX_BYTES:
                raise ModelError(f"{origin}: {size} bytes exceed protobuf's 2 GB limit; "
                                 "store the weights as external data")
            proto = _filedata.in_place_model(path) if in_place and base_dir is None else None
            if proto is not None:
                own_file = path.resolve()
            else:
                proto = _parse(path.read_bytes(), origin)
        except OSError as exc:
            raise ModelError(f"cannot read model file {origin!r}: {exc.strerror or exc}") from exc
        base_dir = path.resolve().parent if base_dir is None else base_dir
    else:
        raise ModelError(f"cannot load a model from {type(source).__name__}")
    if source is proto and _validate.needs_rewrite(proto):
        proto = onnx.ModelProto()
        proto.CopyFrom(source)  # the caller's proto stays as it was
    _validate.check_model(proto)
    check_external_data(proto, base_dir, own_file)
    return proto, (str(base_dir) if base_dir is not None else None)


#: ``ir.Model.meta`` key of the checked ``ModelProto`` a model was deserialized from (``load(keep_source=True)``)
SOURCE_KEY = "onnxport.source_proto"


def load(source, *, base_dir: str | os.PathLike | None = None, in_place: bool = False,
         keep_source: bool = False) -> ir.Model:
    """Load a model from a path, bytes, a ``ModelProto`` or an ``onnx_ir.Model``.

    External data is read (memory-mapped) only from inside the model's folder. Raises
    :class:`ModelError` for unreadable, truncated or invalid files. ``keep_source``: the checked
    proto stays in ``model.meta[SOURCE_KEY]`` (the import's shape inference reads it while the
    graph is unchanged, instead of serializing the model again).
    """
    if isinstance(source, ir.Model):
        return source
    proto, folder = load_proto(source, base_dir, in_place)
    logger = logging.getLogger("onnx_ir")
    level = logger.level
    logger.setLevel(logging.ERROR)  # dangling inputs are reported by our validation instead
    try:
        model = _deserialize.deserialize_model(proto)
    except Exception as exc:
        raise ModelError(f"invalid ONNX model: {type(exc).__name__}: {exc}") from exc
    finally:
        logger.setLevel(level)
    if folder is not None:
        ir.external_data.set_base_dir(model.graph, folder)
    if keep_source:
        model.meta[SOURCE_KEY] = proto
    return model


#: past this many bytes of tensors, ``save`` writes external data (protobuf stops at 2 GB)
EXTERNAL_DATA_BYTES = 2**31 - 2**26


def _tensor_bytes(model: ir.Model) -> int:
    """Bytes of every initializer and tensor attribute, in all graphs, subgraphs and functions."""
    graphs = [model.graph, *(f.graph for f in model.functions.values())]
    total = 0
    while graphs:
        g = graphs.pop()
        total += sum(v.const_value.nbytes for v in g.initializers.values() if v.const_value is not None)
        for node in g:
            for attr in node.attributes.values():
                if attr.type == ir.AttributeType.TENSOR:
                    total += attr.value.nbytes
                elif attr.type == ir.AttributeType.GRAPH:
                    graphs.append(attr.value)
                elif attr.type == ir.AttributeType.GRAPHS:
                    graphs.extend(attr.value)
    return total


def save(
    model: ir.Model,
    path: str | os.PathLike,
    *,
    external_data: str | bool | None = None,
    progress: bool | None = None,
) -> None:
    """Save a model; weights go to external data beside ``path`` when asked or when past 2 GB.

    :param external_data: a file name beside ``path`` (relative location), ``True`` for
        ``<model file name>.data``, ``False`` to never write external data, ``None`` (default)
        for external data only when the tensors pass protobuf's 2 GB limit.
    :param progress: show a progress bar (True), never (False), or (None, default) on a terminal
        when the save takes more than a second.
    """
    if isinstance(model, onnx.ModelProto):
        model = ir.serde.deserialize_model(model)
    path = Path(path)
    size = _tensor_bytes(model)
    if external_data is None:
        external_data = size > EXTERNAL_DATA_BYTES
    if external_data is True:
        external_data = path.name + ".data"
    if external_data is False:
        if size > EXTERNAL_DATA_BYTES:
            raise ModelError(f"{size} bytes of tensors do not fit in one protobuf file (2 GB); "
                             "save with external_data=True")
        external_data = None
    elif Path(external_data).is_absolute() or ".." in Path(external_data).parts:
        raise ModelError(f"external_data={str(external_data)!r} must be a file name beside the model")
    with _progress.task(f"saving {path.name}", total=size, unit="B", enabled=progress) as step:
        def callback(tensor, info) -> None:
            step("", tensor.nbytes)

        ir.save(model, path, external_data=external_data, callback=callback if external_data else None)


