"""``onnxport check``: run a model in a backend and in onnxruntime and compare, output by output
or node by node (every intermediate value), naming the first node that diverges."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir

from ..errors import InputError, OnnxportError
from ..importing.plan import infer_shapes, iter_nodes, node_label
from ..ir import io as _io

#: default tolerances; float16/bfloat16 values are compared with 10x looser ones
RTOL = 1e-3
ATOL = 1e-4


class CheckError(OnnxportError):
    """The check could not run (no onnxruntime, onnxruntime rejects the model ...)."""


# -- inputs ----------------------------------------------------------------------------------------
def graph_inputs(model: ir.Model) -> list[ir.Value]:
    """The graph inputs a caller feeds (initializers excluded)."""
    return [v for v in model.graph.inputs if not v.is_initializer()]


def random_inputs(model: ir.Model, seed: int = 0, dim: int = 1) -> list[np.ndarray]:
    """Random inputs for every graph input: symbolic dims become ``dim``.

    Floats are standard normal, integers small non-negative (safe as indices into a size-2 axis
    or more), booleans uniform.
    """
    rng = np.random.default_rng(seed)
    out = []
    for v in graph_inputs(model):
        if v.dtype is None or v.shape is None:
            raise InputError(f"graph input {v.name!r} has no tensor type/shape; pass --inputs FILE.npz")
        shape = tuple(d if isinstance(d, int) else dim for d in v.shape)
        np_dtype = v.dtype.numpy()
        if v.dtype.is_floating_point():
            arr = rng.standard_normal(shape).astype(np_dtype)
        elif np.dtype(np_dtype) == np.bool_:
            arr = rng.random(shape) < 0.5
        elif v.dtype.is_integer():
            arr = rng.integers(0, 2, size=shape).astype(np_dtype)
        else:
            raise InputError(f"cannot draw random values for input {v.name!r} of type {v.dtype}; pass --inputs")
        out.append(arr)
    return out


def load_inputs(model: ir.Model, path: str | os.PathLike) -> list[np.ndarray]:
    """Inputs from an ``.npz``: arrays named as the graph inputs, else ``arr_0``, ``arr_1`` ... in order."""
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read inputs from {str(path)!r}: {exc}") from exc
    names = [v.name for v in graph_inputs(model)]
    with data:
        keys = list(data.keys())
        if all(n in keys for n in names):
            return [data[n] for n in names]
        if len(keys) == len(names) and all(k == f"arr_{i}" for i, k in enumerate(keys)):
            return [data[k] for k in keys]
    raise InputError(f"{str(path)!r} holds {keys}; the model's inputs are {names} (name them, or save them positionally)")


# -- running -------------------------------------------------------------------------------------
def run_onnxruntime(model: ir.Model, inputs: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Outputs of ``model`` by name, from onnxruntime on the CPU with optimizations off."""
    from ..optional import require

    ort = require("onnxruntime", extra="onnxport[check]", feature="onnxport check (the comparison with onnxruntime)")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        sess = ort.InferenceSession(ir.serde.serialize_model(model).SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])
        feeds = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(None, feeds)))
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
        raise CheckError(f"onnxruntime cannot run the model: {str(exc).splitlines()[0][:300]}") from exc


def run_backend(model: ir.Model, backend: str, inputs: Sequence[np.ndarray],
                options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Import ``model`` into ``backend`` (with import ``options``) and run it: outputs by name."""
    from .. import api

    be = api.get_backend(backend)
    if not be.supports("run"):
        raise CheckError(f"backend {backend!r} cannot run imported models on numpy inputs (no run())")
    imported = api.import_model(model, backend=backend, **(options or {}))
    outs = be.run(imported, list(inputs))
    return {v.name: np.asarray(o) for v, o in zip(model.graph.outputs, outs)}


def _given(options: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"options": options} if options else {}


# -- comparing -------------------------------------------------------------------------------------
@dataclasses.dataclass
class Diff:
    """One compared value."""

    name: str
    ok: bool
    max_abs: float
    detail: str


def _tolerances(dtype: np.dtype, rtol: float, atol: float) -> tuple[float, float]:
    if dtype.name in ("float16", "bfloat16") or dtype.name.startswith("float8"):
        return rtol * 10, atol * 10
    return rtol, atol


def compare(name: str, expected: Any, actual: Any, rtol: float = RTOL, atol: float = ATOL) -> Diff:
    """Compare one value: dtype, shape, then values within ``rtol``/``atol`` (NaNs must match)."""
    e, a = np.asarray(expected), np.asarray(actual)
    if e.shape != a.shape:
        return Diff(name, False, float("inf"), f"shape {a.shape} != onnxruntime's {e.shape}")
    if e.dtype != a.dtype:
        return Diff(name, False, float("inf"), f"dtype {a.dtype} != onnxruntime's {e.dtype}")
    if e.dtype.kind in "SUO":
        ok = bool(np.array_equal(e.astype(str), a.astype(str)))
        return Diff(name, ok, 0.0 if ok else float("inf"), "" if ok else "strings differ")
    if e.size == 0:
        return Diff(name, True, 0.0, "")
    ef, af = e.astype(np.float64), a.astype(np.float64)
    r, t = _tolerances(e.dtype, rtol, atol)
    if e.dtype.kind in "fc":
        if not np.array_equal(np.isnan(ef), np.isnan(af)):
            return Diff(name, False, float("nan"), "NaN positions differ")
        close = np.isclose(af, ef, rtol=r, atol=t, equal_nan=True)
    else:
        close = af == ef
    with np.errstate(invalid="ignore"):
        diff = np.abs(af - ef)
    finite = diff[np.isfinite(diff)]
    max_abs = float(finite.max()) if finite.size else 0.0
    if close.all():
        return Diff(name, True, max_abs, "")
    bad = int((~close).sum())
    return Diff(name, False, max_abs, f"{bad} of {e.size} values differ, max abs diff {max_abs:.3g} (rtol={r}, atol={t})")


def stats(x: Any) -> str:
    """A one-line summary of a value: dtype, shape, min/max/mean/std and non-finite counts."""
    a = np.asarray(x)
    head = f"{a.dtype}{list(a.shape)}"
    if a.size == 0 or a.dtype.kind not in "biuf":
        return head
    f = a.astype(np.float64)
    finite = f[np.isfinite(f)]
    parts = [head]
    if finite.size:
        parts.append(f"min {finite.min():.4g} max {finite.max():.4g} mean {finite.mean():.4g} std {finite.std():.4g}")
    nan, inf = int(np.isnan(f).sum()), int(np.isinf(f).sum())
    if nan or inf:
        parts.append(f"nan {nan} inf {inf}")
    return " ".join(parts)


# -- results -------------------------------------------------------------------------------------
@dataclasses.dataclass
class CheckResult:
    """What ``check`` found: every compared value, and the first diverging node (per-node mode)."""

    backend: str
    diffs: list[Diff]
    compared_nodes: int = 0
    first_bad_node: str | None = None
    first_bad_inputs: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.diffs)

    def summary(self) -> str:
        lines = []
        for d in self.diffs:
            if not d.ok or len(self.diffs) <= 20:
                lines.append(f"  {'ok  ' if d.ok else 'DIFF'} {d.name}: max abs diff {d.max_abs:.3g}"
                             + (f"; {d.detail}" if d.detail else ""))
        if self.compared_nodes:
            lines.insert(0, f"compared {len(self.diffs)} values of {self.compared_nodes} nodes")
        if self.first_bad_node:
            lines.append(f"first diverging node: {self.first_bad_node}")
            lines.extend(f"  input {s}" for s in self.first_bad_inputs)
        verdict = "OK" if self.ok else "MISMATCH"
        lines.append(f"{verdict}: {self.backend} vs onnxruntime, {sum(not d.ok for d in self.diffs)} of {len(self.diffs)} values differ")
        return "\n".join(lines)


class Progress:
    """A plain progress bar on stderr, drawn only for long runs on a terminal."""

    def __init__(self, total: int, label: str, stream: Any = None, min_total: int = 50):
        self.total, self.label, self.n = total, label, 0
        self.stream = stream or sys.stderr
        self.enabled = total >= min_total and getattr(self.stream, "isatty", lambda: False)()

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.enabled:
            width = 30
            done = int(width * self.n / max(self.total, 1))
            self.stream.write(f"\r{self.label} [{'#' * done}{'.' * (width - done)}] {self.n}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def check(
    model: Any,
    backend: str,
    inputs: Sequence[np.ndarray] | None = None,
    *,
    per_node: bool = False,
    rtol: float = RTOL,
    atol: float = ATOL,
    progress: Callable[[int, str], Progress] | None = None,
    options: Mapping[str, Any] | None = None,
) -> CheckResult:
    """Compare ``backend``'s outputs with onnxruntime's on ``inputs`` (random when None).

    With ``per_node``, every value a node of the main graph produces (with a known tensor type)
    becomes a graph output in a copy of the model, in onnxruntime and in the backend, and the
    values are compared in topological order: the first node with a diverging output is named,
    with statistics of its inputs.
    """
    if options:  # refused before onnxruntime runs
        from .. import api

        api.check_import_options(backend, dict(options))
    base = _io.load(model) if not isinstance(model, ir.Model) else _io.load(ir.serde.serialize_model(model))
    feeds = list(inputs) if inputs is not None else random_inputs(base)
    if len(feeds) != len(graph_inputs(base)):
        raise InputError(f"the model has {len(graph_inputs(base))} inputs, {len(feeds)} were given")
    if not per_node:
        expected = run_onnxruntime(base, feeds)
        actual = run_backend(_io.load(ir.serde.serialize_model(base)), backend, feeds, **_given(options))
        return CheckResult(backend, [compare(n, e, actual[n], rtol, atol) for n, e in expected.items()])

    probe = _io.load(ir.serde.serialize_model(base))
    infer_shapes(probe)
    probe.graph.sort()
    outputs = list(probe.graph.outputs)
    seen = {v.name for v in outputs}
    order: list[tuple[ir.Node, list[ir.Value]]] = []
    for node in probe.graph:
        vals = [v for v in node.outputs if v.name and v.type is not None and isinstance(v.type, ir.TensorType)]
        order.append((node, vals))
        for v in vals:
            if v.name not in seen:
                seen.add(v.name)
                outputs.append(v)
    probe.graph.outputs.clear()
    probe.graph.outputs.extend(outputs)
    expected = run_onnxruntime(probe, feeds)
    actual = run_backend(_io.load(ir.serde.serialize_model(probe)), backend, feeds, **_given(options))
    known: dict[str, Any] = {v.name: x for v, x in zip(graph_inputs(probe), feeds)}
    for v in probe.graph.initializers.values():
        if v.const_value is not None:
            known[v.name] = v.const_value.numpy()
    known.update(expected)
    bar = (progress or (lambda n, label: Progress(n, label)))(len(order), "comparing")
    result = CheckResult(backend, [], compared_nodes=0)
    try:
        for node, vals in order:
            bar.update()
            result.compared_nodes += 1
            for v in vals:
                if v.name not in expected or v.name not in actual:
                    continue
                d = compare(v.name, expected[v.name], actual[v.name], rtol, atol)
                result.diffs.append(d)
                if not d.ok and result.first_bad_node is None:
                    result.first_bad_node = f"{node_label(node)} -> output {v.name!r}: {d.detail}"
                    for i, x in enumerate(node.inputs):
                        if x is None:
                            continue
                        shown = stats(known[x.name]) if x.name in known else "(value not available)"
                        result.first_bad_inputs.append(f"{i} {x.name!r}: {shown}")
    finally:
        bar.close()
    return result


def count_nodes(model: ir.Model) -> int:
    """Nodes of a model, subgraphs included."""
    return sum(1 for _ in iter_nodes(model.graph))
