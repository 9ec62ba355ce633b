"""The official ONNX backend node cases, built once per onnx version and cached on disk."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

CACHE_ENV = "ONNXPORT_CACHE"


def cache_root() -> Path:
    """Where generated data lives: ``$ONNXPORT_CACHE`` or ``~/.cache/onnxport``."""
    base = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "onnxport")
    return Path(base)


@dataclasses.dataclass
class NodeCase:
    """One official node case: a small model, its inputs and expected outputs."""

    name: str
    path: Path
    ops: tuple[tuple[str, str], ...]  # (domain, op_type) of every node, subgraphs included
    opset: int

    @functools.cached_property
    def model(self) -> onnx.ModelProto:
        return onnx.load(str(self.path / "model.onnx"))

    def data(self) -> tuple[list[Any], list[Any]]:
        inputs, outputs = _read_values(self.path, "input"), _read_values(self.path, "output")
        return inputs, _frozen_outputs(self.name, inputs, outputs)

    @property
    def main_op(self) -> str:
        return self.ops[0][1] if len(self.ops) == 1 else self.name


def _to_proto(value: Any, name: str):
    if isinstance(value, onnx.TensorProto):
        return "tensor", value
    if value is None:
        return "optional", numpy_helper.from_optional(None, name=name)
    if isinstance(value, list):
        return "sequence", numpy_helper.from_list([np.asarray(v) for v in value], name=name)
    return "tensor", numpy_helper.from_array(np.asarray(value), name=name)


def _write_values(folder: Path, prefix: str, values) -> None:
    for i, v in enumerate(values):
        kind, proto = _to_proto(v, f"{prefix}_{i}")
        (folder / f"{prefix}_{i}.{kind}.pb").write_bytes(proto.SerializeToString())


def _read_values(folder: Path, prefix: str) -> list[Any]:
    files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.name.split(".")[0].split("_")[-1]))
    out = []
    for f in files:
        kind = f.name.split(".")[1]
        data = f.read_bytes()
        if kind == "tensor":
            t = onnx.TensorProto()
            t.ParseFromString(data)
            out.append(numpy_helper.to_array(t))
        elif kind == "sequence":
            s = onnx.SequenceProto()
            s.ParseFromString(data)
            out.append(numpy_helper.to_list(s))
        else:
            o = onnx.OptionalProto()
            o.ParseFromString(data)
            out.append(numpy_helper.to_optional(o))
    return out


#: Cases whose expected values onnx computes at generation time with ml_dtypes' float -> 4/2-bit
#: integer cast. The specification leaves float -> fixed point undefined out of range, and ml_dtypes
#: versions disagree there (0.5 wraps, 0.7 gives 0), so these expected values are recomputed with the
#: rule every backend and onnxruntime follow: truncate toward zero, then keep the low bits (two's
#: complement for the signed types), the specification's own rule for fixed point -> fixed point.
_NARROW_CAST = re.compile(r"test_cast(?:like)?_(?:FLOAT|FLOAT16|BFLOAT16|DOUBLE)_to_(U?INT)([24])(?:_expanded)?$")


def narrow_int_cast(values: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """Float values cast to a ``bits``-wide integer by ONNX's truncate-and-wrap rule, as int16."""
    v = np.trunc(np.asarray(values, dtype=np.float64))
    v = np.where(np.isfinite(v), v, 0).astype(np.int64)
    span = 1 << bits
    wrapped = np.mod(v, span)
    if signed:
        wrapped = np.where(wrapped >= span >> 1, wrapped - span, wrapped)
    return wrapped.astype(np.int16)


def _frozen_outputs(name: str, inputs: list[Any], outputs: list[Any]) -> list[Any]:
    match = _NARROW_CAST.match(name)
    if not match:
        return outputs
    kind, bits = match.group(1), int(match.group(2))
    expected = np.asarray(outputs[0])
    frozen = narrow_int_cast(np.asarray(inputs[0]).astype(np.float64), bits, kind == "INT")
    # in-range integers convert to ml_dtypes' narrow types identically in every version
    return [frozen.astype(expected.dtype), *outputs[1:]]


def _ops(graph: onnx.GraphProto) -> list[tuple[str, str]]:
    found = []
    for node in graph.node:
        found.append((node.domain if node.domain != "ai.onnx" else "", node.op_type))
        for a in node.attribute:
            if a.HasField("g"):
                found.extend(_ops(a.g))
            for g in a.graphs:
                found.extend(_ops(g))
    return found


def _build(folder: Path) -> None:
    from onnx.backend.test.loader import load_model_tests

    tmp = Path(tempfile.mkdtemp(prefix="nodecases-", dir=folder.parent))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            cases = load_model_tests(kind="node")
    for case in cases:
        d = tmp / case.name
        d.mkdir()
        (d / "model.onnx").write_bytes(case.model.SerializeToString())
        inputs, outputs = case.data_sets[0]
        _write_values(d, "input", inputs)
        _write_values(d, "output", outputs)
    try:
        tmp.rename(folder)
    except OSError:  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)


def case_dir() -> Path:
    """The cache folder for this onnx version, built on first use."""
    folder = cache_root() / "nodecases" / f"onnx-{onnx.__version__}"
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        _build(folder)
    return folder


@functools.lru_cache(maxsize=1)
def node_cases() -> tuple[NodeCase, ...]:
    """Every official node case, sorted by name."""
    out = []
    for d in sorted(case_dir().iterdir()):
        if not (d / "model.onnx").is_file():
            continue
        model = onnx.load(str(d / "model.onnx"), load_external_data=False)
        ops = tuple(dict.fromkeys(_ops(model.graph)))
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        out.append(NodeCase(d.name, d, ops, opset))
    return tuple(out)


def _squash(name: str) -> str:
    return name.replace("_", "").lower()


def case_target(case: NodeCase) -> str | None:
    """The op a node case is about: its only op, else the op its name starts with.

    ``test_softmax_axis_0_expanded`` (Exp, ReduceMax, ...) is about Softmax. Coverage counts a
    failing multi-op case against this op only; a passing case counts for every op it runs.
    """
    ops = [op for _, op in case.ops]
    if len(set(ops)) == 1:
        return ops[0]
    stem = _squash(case.name[5:] if case.name.startswith("test_") else case.name)
    best = None
    for op in ops:
        if stem.startswith(_squash(op)) and (best is None or len(op) > len(best)):
            best = op
    return best
