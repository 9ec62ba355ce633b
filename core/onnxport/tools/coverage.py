"""Coverage dashboards: op x opset x backend x direction, from the reports of every backend run.

The input is one or more JSON reports that ``pytest --onnxport-report PATH`` writes (results of
every generated test, a snapshot of the registry and the run's filter), typically one per
backend environment; they are merged into one matrix. A cell is:

- ``tested-passing``: a case exercising that op's version passed, and no case about it failed
  (reviewed expected failures beside passing cases are counted, not held against it);
- ``expected-failure``: the only cases about it are reviewed expected failures;
- ``failing``: a case whose subject is that op (at that version) failed, or an expected failure passed;
- ``registered-untested``: a primitive is registered, a run covered it, but no case ran it;
- ``not-run``: a primitive is registered, but the runs were filtered to other ops;
- ``missing``: no primitive.

Rows are the ops of ``ai.onnx`` (an op belongs to opset N when ``onnx.defs`` defines it there,
deprecated ops excluded; its version at N is the ``since_version`` a model importing opset N
gets), the ops of the other ONNX domains (``ai.onnx.ml``, ``ai.onnx.preview.training``,
``ai.onnx.preview``: their own opsets, so one row each at every opset) and the custom-domain ops
backends register. Columns are (backend, direction) for every backend any report knows.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import OnnxportError
from ..plugin import spec as _spec

STATUSES = ("tested-passing", "expected-failure", "failing", "registered-untested", "not-run", "missing")
DIRECTIONS = ("import", "export")
#: the oldest opset on the dashboard (DESIGN: models from opset 7 load)
OLDEST_OPSET = 7
_FAIL = {"failed", "xpassed", "error"}
#: ONNX's own domains besides ai.onnx: rows with their newest version, whatever the ai.onnx opset
ONNX_DOMAINS = ("ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")


class ReportError(OnnxportError):
    """The testkit report is missing, unreadable or not a testkit report."""


@dataclasses.dataclass
class Cell:
    """One (op, backend, direction) at one op version."""

    status: str
    passed: int = 0
    failed: int = 0
    xfailed: int = 0
    cases: list[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "passed": self.passed, "failed": self.failed, "xfailed": self.xfailed,
                "cases": self.cases[:20]}


@dataclasses.dataclass
class OpsetCoverage:
    """The matrix at one opset: rows are ops, columns (backend, direction)."""

    opset: int
    versions: dict[str, int]
    cells: dict[tuple[str, str, str], Cell]  # (op, backend, direction) -> Cell
    directions: tuple[str, ...] = DIRECTIONS

    def totals(self, backends: Iterable[str]) -> dict[str, dict[str, dict[str, int]]]:
        """Per backend and direction: how many ops have each status."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for b in backends:
            for d in self.directions:
                counts = dict.fromkeys(STATUSES, 0)
                for op in self.versions:
                    counts[self.cells[(op, b, d)].status] += 1
                out.setdefault(b, {})[d] = counts
        return out


@dataclasses.dataclass
class Coverage:
    """Every opset's matrix, with what it was built from."""

    backends: list[str]
    opsets: dict[int, OpsetCoverage]
    onnx_version: str
    source: str
    filters: dict[str, Any]
    directions: tuple[str, ...] = DIRECTIONS
    #: op -> (domain label, per opset the version or 0 when absent); the HTML page's row table
    rows: dict[str, tuple[str, dict[int, int]]] = dataclasses.field(default_factory=dict)
    #: (op, version, backend, direction) -> Cell: a cell depends on the op's version, not the opset
    cells: dict[tuple[str, int, str, str], Cell] = dataclasses.field(default_factory=dict)
    runs: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    #: model -> (exporter, importer) -> row of tests/test_exchange.py (see :mod:`onnxport.tools.coverage_exchange`)
    exchange: dict[str, dict[tuple[str, str], dict[str, Any]]] = dataclasses.field(default_factory=dict)

    @property
    def columns(self) -> list[tuple[str, str]]:
        return [(b, d) for b in self.backends for d in self.directions]

    def to_json(self) -> dict[str, Any]:
        return {
            "onnx": self.onnx_version,
            "report": self.source,
            "runs": self.runs,
            "filters": self.filters,
            "backends": self.backends,
            "directions": list(self.directions),
            "statuses": list(STATUSES),
            "exchange": {m: {f"{s}->{t}": row for (s, t), row in cells.items()} for m, cells in self.exchange.items()},
            "opsets": {
                str(n): {
                    "totals": oc.totals(self.backends),
                    "ops": {
                        op: {"version": v, **{b: {d: oc.cells[(op, b, d)].to_json() for d in self.directions}
                                               for b in self.backends}}
                        for op, v in sorted(oc.versions.items())
                    },
                }
                for n, oc in sorted(self.opsets.items())
            },
        }


# -- reading -----------------------------------------------------------------------------------
def load_report(path: str | os.PathLike) -> dict[str, Any]:
    """Read a testkit report, with a clear error when it is not one."""
    p = Path(path)
    if not p.is_file():
        raise ReportError(
            f"no testkit report at {str(p)!r}; write one with "
            f"`pytest tests/test_generated.py --onnxport-report {p}`"
        )
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise ReportError(f"{str(p)!r} is not a JSON testkit report: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ReportError(f"{str(p)!r} has no 'results' list: not written by --onnxport-report")
    if "registry" not in data:
        raise ReportError(
            f"{str(p)!r} is an old-format report (no registry snapshot); regenerate it with this testkit"
        )
    return data


def report_paths(paths: Sequence[str | os.PathLike]) -> list[Path]:
    """Report files from files and folders (a folder gives its ``testkit*.json``, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("testkit*.json"))
            if not found:
                raise ReportError(f"no testkit*.json report in folder {str(p)!r}")
            out.extend(found)
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def _label(domain: str, op: str) -> str:
    return f"{domain}::{op}" if domain else op


def _import_ops(r: dict[str, Any]) -> tuple[list[str], dict[str, int]]:
    """An import result's op labels and versions (format 2 reports name ops without their domain)."""
    ops = list(r.get("ops") or [])
    versions = dict(r.get("versions") or {})
    domain = r.get("domain") or ""
    if domain:  # a declared case of a custom or non-default-domain op
        ops = [op if "::" in op else _label(domain, op) for op in ops]
        versions = {(k if "::" in k else _label(domain, k)): v for k, v in versions.items()}
    return ops, versions


def _row_version(op: str, version: int | None) -> int | None:
    """The version a result counts for: an ai.onnx op's since_version; 0 for every other domain."""
    if "::" in op:
        return 0
    return version


def _tally(results: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str, int], list[tuple[str, str]]]:
    """(backend, direction, op, version) -> [(outcome, case)] from the results."""
    out: dict[tuple[str, str, str, int], list[tuple[str, str]]] = {}
    for r in results:
        outcome = r.get("outcome")
        if outcome not in _FAIL and outcome not in ("passed", "xfailed"):
            continue  # skipped: says nothing about the op
        backend, direction, case = r.get("backend"), r.get("direction"), r.get("case", "?")
        if direction == "import":
            ops, versions = _import_ops(r)
            target = r.get("target")
            if target and r.get("domain") and "::" not in target:
                target = _label(r["domain"], target)
            subjects = ops if outcome == "passed" else [t for t in [target] if t]
            for op in dict.fromkeys(subjects):
                v = _row_version(op, versions.get(op))
                if v is not None:
                    out.setdefault((backend, "import", op, v), []).append((outcome, case))
        elif direction == "export":
            opset = r.get("opset") or _spec.latest_opset()
            ops = (r.get("emitted") or r.get("emits") or []) if outcome == "passed" else (r.get("emits") or [])
            for op in dict.fromkeys(ops):
                if _spec.has_spec(op, opset):
                    v = _spec.get_spec(op, opset).since_version
                    out.setdefault((backend, "export", op, v), []).append((outcome, case))
    return out


def _cell(runs: list[tuple[str, str]], registered: bool, covered: bool) -> Cell:
    passed = sum(1 for o, _ in runs if o == "passed")
    failed = sum(1 for o, _ in runs if o in _FAIL)
    xfailed = sum(1 for o, _ in runs if o == "xfailed")
    if failed:
        status = "failing"
    elif passed:
        status = "tested-passing"
    elif xfailed:
        status = "expected-failure"
    elif not registered:
        status = "missing"
    elif covered:
        status = "registered-untested"
    else:
        status = "not-run"
    bad = [c for o, c in runs if o in _FAIL]
    xf = [f"{c} (expected failure)" for o, c in runs if o == "xfailed"]
    good = sorted({c for o, c in runs if o == "passed"})
    return Cell(status, passed, failed, xfailed, [*sorted(bad), *sorted(xf), *good])


def _selected(report: dict[str, Any], backend: str, registry: dict[str, Any]) -> dict[str, set[str]] | None:
    """The rows a report's run covered for ``backend`` (None: every row; a filtered run: its selection)."""
    filters = report.get("filters") or {}
    scope = filters.get("backends") or list(report.get("registry") or {})
    if backend not in scope:
        return {d: set() for d in DIRECTIONS}
    chosen = report.get("selected")
    if chosen is not None:
        sel = chosen.get(backend) or {}
        return {d: set(sel.get(d, [])) for d in DIRECTIONS}
    terms = set(filters.get("ops") or [])
    if not terms and not filters.get("package"):
        return None
    tables = registry.get(backend, {})  # a format 2 report: terms were op types or export targets
    imports = {_label(p.get("domain", ""), p["op"]) for p in tables.get("import", []) if p["op"] in terms}
    exports = {op for p in tables.get("export", []) for op in p.get("emits", [])
               if p["target"] in terms or op in terms}
    return {"import": imports, "export": exports}


def merge(reports: Sequence[dict[str, Any]], sources: Sequence[str] = ()) -> dict[str, Any]:
    """One report from several (one per backend run): registries, results and per-backend coverage."""
    registry: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for rep in reports:
        for b, tables in (rep.get("registry") or {}).items():
            mine = registry.setdefault(b, {})
            for d, entries in tables.items():
                have = mine.setdefault(d, [])
                seen = {json.dumps(e, sort_keys=True) for e in have}
                have.extend(e for e in entries if json.dumps(e, sort_keys=True) not in seen)
    covered: dict[str, dict[str, set[str]] | None] = {}
    for b in registry:
        sets = [_selected(rep, b, registry) for rep in reports]
        if any(s is None for s in sets):
            covered[b] = None
        else:
            covered[b] = {d: set().union(*(s[d] for s in sets)) for d in DIRECTIONS}
    versions = sorted({str(rep.get("onnx", "?")) for rep in reports})
    runs = [{"report": src, "filters": rep.get("filters") or {}, "backends": sorted(rep.get("registry") or {})}
            for rep, src in zip(reports, list(sources) + [""] * len(reports))]
    return {"onnx": ", ".join(versions), "registry": registry, "covered": covered, "runs": runs,
            "results": [r for rep in reports for r in rep["results"]],
            "exchange": [row for rep in reports for row in rep.get("exchange") or []]}


# -- building ------------------------------------------------------------------------------------
def _domain_rows() -> dict[str, str]:
    """Ops of ONNX's other domains (newest, not deprecated): label -> version text."""
    out = {}
    for d in ONNX_DOMAINS:
        newest = _spec.latest_opset(d)
        for op in _spec.all_ops(d, newest):
            out[_label(d, op)] = f"{d} {_spec.get_spec(op, newest, d).since_version}"
    return out


def build(report: dict[str, Any], opsets: Iterable[int] | None = None, source: str = "") -> Coverage:
    """The coverage matrices of ``opsets`` (default: 7 to the newest) from a (merged) testkit report."""
    if "covered" not in report:
        report = merge([report], [source])
    registry = report.get("registry") or {}
    backends = sorted(registry)
    newest = _spec.latest_opset()
    wanted = list(opsets) if opsets is not None else list(range(OLDEST_OPSET, newest + 1))
    for n in wanted:
        if not 1 <= n <= newest:
            raise ReportError(f"opset {n} is outside 1..{newest} (onnx {report.get('onnx', '?')})")
    registered: dict[tuple[str, str], set[str]] = {}
    custom: set[str] = set()
    for b, tables in registry.items():
        imp = {_label(p.get("domain", ""), p["op"]) for p in tables.get("import", [])}
        custom |= {op for op in imp if "::" in op and op.split("::")[0] not in ONNX_DOMAINS}
        registered[(b, "import")] = imp
        registered[(b, "export")] = {op for p in tables.get("export", []) for op in p.get("emits", [])}
    covered = report.get("covered") or {}
    tally = _tally(report["results"])
    domain_rows = _domain_rows()
    extra = {**domain_rows, **{op: "custom" for op in sorted(custom)}}
    rows: dict[str, tuple[str, dict[int, int]]] = {}
    cells: dict[tuple[str, int, str, str], Cell] = {}
    result: dict[int, OpsetCoverage] = {}
    for n in wanted:
        versions = {op: _spec.get_spec(op, n).since_version for op in _spec.all_ops("", n)}
        versions.update(dict.fromkeys(extra, 0))
        opset_cells: dict[tuple[str, str, str], Cell] = {}
        for op, v in versions.items():
            rows.setdefault(op, (extra.get(op, ""), {}))[1][n] = v
            for b in backends:
                for d in DIRECTIONS:
                    key = (op, v, b, d)
                    if key not in cells:
                        cov = covered.get(b)
                        is_covered = cov is None or op in cov.get(d, set())
                        cells[key] = _cell(tally.get((b, d, op, v), []), op in registered.get((b, d), set()), is_covered)
                    opset_cells[(op, b, d)] = cells[key]
        result[n] = OpsetCoverage(n, versions, opset_cells)
    filters = {"ops": sorted({t for run in report.get("runs", []) for t in (run["filters"].get("ops") or [])})}
    from .coverage_exchange import collect

    return Coverage(backends, result, str(report.get("onnx", "?")), source, filters, DIRECTIONS, rows, cells,
                    list(report.get("runs", [])), collect([report]))


def from_report(path: str | os.PathLike, opsets: Iterable[int] | None = None) -> Coverage:
    """Load a report and build its coverage."""
    return from_reports([path], opsets)


def from_reports(paths: Sequence[str | os.PathLike], opsets: Iterable[int] | None = None) -> Coverage:
    """Load reports (files, or folders of ``testkit*.json``), merge them and build one coverage."""
    files = report_paths(paths)
    reports = [load_report(p) for p in files]
    return build(merge(reports, [str(p) for p in files]), opsets, source=", ".join(str(p) for p in files))


# -- rendering -----------------------------------------------------------------------------------
_MARK = {"tested-passing": "pass", "expected-failure": "xfail", "failing": "FAIL",
         "registered-untested": "untested", "not-run": "not run", "missing": "-"}


def cell_text(c: Cell) -> str:
    """``pass 3/3``, ``pass 2/2 +1 xfail``, ``FAIL 1/2``, ``xfail 2``, ``untested``, ``not run``, ``-``."""
    if c.status == "expected-failure":
        return f"xfail {c.xfailed}"
    text = _MARK[c.status]
    if c.passed + c.failed:
        text += f" {c.passed}/{c.passed + c.failed}"
    if c.xfailed:
        text += f" +{c.xfailed} xfail"
    return text


def _pct(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    return f"{100.0 * counts['tested-passing'] / max(total, 1):.1f}%"


def to_markdown(cov: Coverage, opset: int | None = None) -> str:
    """A summary per opset and the op table of one opset (default: the newest covered)."""
    shown = opset if opset is not None else max(cov.opsets)
    if shown not in cov.opsets:
        raise ReportError(f"opset {shown} is not in this coverage (have {min(cov.opsets)}..{max(cov.opsets)})")
    lines = [f"# onnxport coverage (onnx {cov.onnx_version})", ""]
    if cov.source:
        lines += [f"From the testkit report(s) `{cov.source}`.", ""]
    if cov.filters.get("ops"):
        lines += [f"The run was filtered to ops: {', '.join(cov.filters['ops'])}.", ""]
    cols = cov.columns
    lines += ["## Tested-passing ops per opset", "",
              "| opset | ops | " + " | ".join(f"{b} {d}" for b, d in cols) + " |",
              "|---|---|" + "---|" * len(cols)]
    for n, oc in sorted(cov.opsets.items()):
        totals = oc.totals(cov.backends)
        row = [f"{totals[b][d]['tested-passing']} ({_pct(totals[b][d])})" for b, d in cols]
        lines.append(f"| {n} | {len(oc.versions)} | " + " | ".join(row) + " |")
    oc = cov.opsets[shown]
    totals = oc.totals(cov.backends)
    lines += ["", f"## Opset {shown}", "", "| backend | direction | " + " | ".join(STATUSES) + " |",
              "|---|---|" + "---|" * len(STATUSES)]
    for b, d in cols:
        lines.append(f"| {b} | {d} | " + " | ".join(str(totals[b][d][s]) for s in STATUSES) + " |")
    lines += ["", "| op | version | " + " | ".join(f"{b} {d}" for b, d in cols) + " |",
              "|---|---|" + "---|" * len(cols)]
    for op, v in sorted(oc.versions.items()):
        cells = [cell_text(oc.cells[(op, b, d)]) for b, d in cols]
        lines.append(f"| {op} | {v or cov.rows.get(op, ('-',))[0] or '-'} | " + " | ".join(cells) + " |")
    if cov.exchange:
        from .coverage_exchange import to_markdown as exchange_md

        lines += ["", exchange_md(cov.exchange)]
    return "\n".join(lines) + "\n"


def to_json(cov: Coverage) -> str:
    return json.dumps(cov.to_json(), indent=1)
