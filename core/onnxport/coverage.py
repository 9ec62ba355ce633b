"""Coverage dashboards: op x backend x direction x status per opset, from a testkit run's report.

The input is the JSON that ``pytest --onnxport-report PATH`` writes (results of every generated
test plus a snapshot of the registry). A cell is:

- ``tested-passing``: at least one case exercising that op's version at that opset passed, none failed;
- ``failing``: a case whose subject is that op (at that version) failed (expected failures included);
- ``registered-untested``: a primitive is registered, but no case ran it at that version;
- ``missing``: no primitive.

An op belongs to opset N when ``onnx.defs`` defines it there (deprecated ops excluded); its
version at N is the schema ``since_version`` a model importing opset N gets.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import spec as _spec
from .errors import OnnxportError

STATUSES = ("tested-passing", "failing", "registered-untested", "missing")
DIRECTIONS = ("import", "export")
#: the oldest opset on the dashboard (DESIGN: models from opset 7 load)
OLDEST_OPSET = 7
_FAIL = {"failed", "xpassed", "xfailed", "error"}


class ReportError(OnnxportError):
    """The testkit report is missing, unreadable or not a testkit report."""


@dataclasses.dataclass
class Cell:
    """One (op, backend, direction) at one opset."""

    status: str
    passed: int = 0
    failed: int = 0
    cases: list[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "passed": self.passed, "failed": self.failed, "cases": self.cases[:20]}


@dataclasses.dataclass
class OpsetCoverage:
    """The matrix at one opset: rows are ops, columns (backend, direction)."""

    opset: int
    versions: dict[str, int]
    cells: dict[tuple[str, str, str], Cell]  # (op, backend, direction) -> Cell

    def totals(self, backends: Iterable[str]) -> dict[str, dict[str, dict[str, int]]]:
        """Per backend and direction: how many ops have each status."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for b in backends:
            for d in DIRECTIONS:
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

    def to_json(self) -> dict[str, Any]:
        return {
            "onnx": self.onnx_version,
            "report": self.source,
            "filters": self.filters,
            "backends": self.backends,
            "directions": list(DIRECTIONS),
            "statuses": list(STATUSES),
            "opsets": {
                str(n): {
                    "totals": oc.totals(self.backends),
                    "ops": {
                        op: {"version": v, **{b: {d: oc.cells[(op, b, d)].to_json() for d in DIRECTIONS}
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


def _version(op: str, opset: int) -> int | None:
    return _spec.get_spec(op, opset).since_version if _spec.has_spec(op, opset) else None


def _tally(report: dict[str, Any]) -> dict[tuple[str, str, str, int], list[tuple[bool, str]]]:
    """(backend, direction, op, version) -> [(passed?, case)] from the results."""
    out: dict[tuple[str, str, str, int], list[tuple[bool, str]]] = {}

    def add(key, ok: bool, case: str) -> None:
        out.setdefault(key, []).append((ok, case))

    for r in report["results"]:
        outcome = r.get("outcome")
        if outcome not in _FAIL and outcome != "passed":
            continue  # skipped: says nothing about the op
        ok = outcome == "passed"
        backend, direction, case = r.get("backend"), r.get("direction"), r.get("case", "?")
        if direction == "import":
            domain = r.get("domain", "")
            versions = r.get("versions") or {}
            ops = r.get("ops") or []
            subjects = ops if ok else [t for t in [r.get("target")] if t]
            for op in dict.fromkeys(subjects):
                name = f"{domain}::{op}" if domain else op
                v = versions.get(op) if not domain else 0
                if v is None:
                    continue
                add((backend, "import", name, v), ok, case)
        elif direction == "export":
            opset = r.get("opset") or _spec.latest_opset()
            ops = (r.get("emitted") or r.get("emits") or []) if ok else (r.get("emits") or [])
            for op in dict.fromkeys(ops):
                v = _version(op, opset)
                if v is not None:
                    add((backend, "export", op, v), ok, case)
    return out


def build(report: dict[str, Any], opsets: Iterable[int] | None = None, source: str = "") -> Coverage:
    """The coverage matrices of ``opsets`` (default: 7 to the newest) from a testkit report."""
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
        imp = set()
        for p in tables.get("import", []):
            name = f"{p['domain']}::{p['op']}" if p.get("domain") else p["op"]
            imp.add(name)
            if p.get("domain"):
                custom.add(name)
        registered[(b, "import")] = imp
        registered[(b, "export")] = {op for p in tables.get("export", []) for op in p.get("emits", [])}
    tally = _tally(report)
    result: dict[int, OpsetCoverage] = {}
    for n in wanted:
        versions = {op: _spec.get_spec(op, n).since_version for op in _spec.all_ops("", n)}
        versions.update(dict.fromkeys(sorted(custom), 0))
        cells: dict[tuple[str, str, str], Cell] = {}
        for op, v in versions.items():
            for b in backends:
                for d in DIRECTIONS:
                    runs = tally.get((b, d, op, v), [])
                    passed = sum(1 for ok, _ in runs if ok)
                    failed = len(runs) - passed
                    if failed:
                        status = "failing"
                    elif passed:
                        status = "tested-passing"
                    elif op in registered.get((b, d), set()):
                        status = "registered-untested"
                    else:
                        status = "missing"
                    cases = sorted({c for ok, c in runs if not ok}) + sorted({c for ok, c in runs if ok})
                    cells[(op, b, d)] = Cell(status, passed, failed, cases)
        result[n] = OpsetCoverage(n, versions, cells)
    return Coverage(backends, result, str(report.get("onnx", "?")), source, dict(report.get("filters") or {}))


def from_report(path: str | os.PathLike, opsets: Iterable[int] | None = None) -> Coverage:
    """Load a report and build its coverage."""
    return build(load_report(path), opsets, source=str(path))


# -- rendering -----------------------------------------------------------------------------------
_MARK = {"tested-passing": "pass", "failing": "FAIL", "registered-untested": "untested", "missing": "-"}


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
        lines += [f"From the testkit report `{cov.source}`.", ""]
    if cov.filters.get("ops"):
        lines += [f"The run was filtered to ops: {', '.join(cov.filters['ops'])}.", ""]
    cols = [(b, d) for b in cov.backends for d in DIRECTIONS]
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
        cells = []
        for b, d in cols:
            c = oc.cells[(op, b, d)]
            detail = f" {c.passed}/{c.passed + c.failed}" if c.passed + c.failed else ""
            cells.append(_MARK[c.status] + detail)
        lines.append(f"| {op} | {v or '-'} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_json(cov: Coverage) -> str:
    return json.dumps(cov.to_json(), indent=1)


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>onnxport coverage</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.8em 0}th,td{border:1px solid #ccc;padding:2px 8px;font-size:13px}
th{background:#f0f0f0;cursor:pointer;user-select:none}th.asc:after{content:" \\25B2"}th.desc:after{content:" \\25BC"}
td.tested-passing{background:#c8f7c5}td.failing{background:#f7c5c5}td.registered-untested{background:#fff2b3}
td.missing{background:#eee;color:#888}#totals td{text-align:right}
</style></head><body>
<h1>onnxport coverage</h1>
<p>onnx __ONNX__, from the testkit report <code>__SOURCE__</code>__FILTER__.
Statuses: tested-passing, failing, registered-untested, missing. Click a column header to sort.</p>
<label>Opset <select id="opset"></select></label>
<h2>Totals per backend</h2><table id="totals"><thead></thead><tbody></tbody></table>
<h2>Ops</h2><table id="ops"><thead></thead><tbody></tbody></table>
<script id="coverage-data" type="application/json">__DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("coverage-data").textContent);
const RANK = {"tested-passing": 0, "failing": 1, "registered-untested": 2, "missing": 3};
const cols = [];
for (const b of DATA.backends) for (const d of DATA.directions) cols.push([b, d]);
const sel = document.getElementById("opset");
for (const n of Object.keys(DATA.opsets).sort((a, b) => a - b)) {
  const o = document.createElement("option"); o.value = n; o.textContent = n; sel.appendChild(o);
}
sel.value = Object.keys(DATA.opsets).sort((a, b) => b - a)[0];
function el(tag, text, cls) {
  const e = document.createElement(tag); if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls; return e;
}
let sortState = {col: 0, dir: 1};
function render() {
  const o = DATA.opsets[sel.value];
  const th = document.querySelector("#totals thead"), tb = document.querySelector("#totals tbody");
  th.innerHTML = ""; tb.innerHTML = "";
  const hr = el("tr"); for (const h of ["backend", "direction", ...DATA.statuses, "passing %"]) hr.appendChild(el("th", h));
  th.appendChild(hr);
  for (const [b, d] of cols) {
    const t = o.totals[b][d], tr = el("tr");
    tr.dataset.backend = b; tr.dataset.direction = d;
    tr.appendChild(el("td", b)); tr.appendChild(el("td", d));
    let total = 0; for (const s of DATA.statuses) { tr.appendChild(el("td", String(t[s]), s)); total += t[s]; }
    tr.appendChild(el("td", (100 * t["tested-passing"] / Math.max(total, 1)).toFixed(1) + "%"));
    tb.appendChild(tr);
  }
  const oh = document.querySelector("#ops thead"), ob = document.querySelector("#ops tbody");
  oh.innerHTML = ""; ob.innerHTML = "";
  const r = el("tr");
  ["op", "version", ...cols.map(([b, d]) => b + " " + d)].forEach((h, i) => {
    const c = el("th", h); c.dataset.col = i;
    if (i === sortState.col) c.className = sortState.dir > 0 ? "asc" : "desc";
    c.addEventListener("click", () => {
      sortState = {col: i, dir: sortState.col === i ? -sortState.dir : 1}; render();
    });
    r.appendChild(c);
  });
  oh.appendChild(r);
  const rows = Object.entries(o.ops).map(([op, info]) => {
    const cells = cols.map(([b, d]) => info[b][d]);
    return {op, version: info.version, cells};
  });
  const key = (row) => sortState.col === 0 ? row.op : sortState.col === 1 ? row.version
    : RANK[row.cells[sortState.col - 2].status] * 1e6 - row.cells[sortState.col - 2].passed;
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : a.op < b.op ? -1 : 1) * sortState.dir; });
  for (const row of rows) {
    const tr = el("tr"); tr.appendChild(el("td", row.op)); tr.appendChild(el("td", String(row.version || "-")));
    for (const c of row.cells) {
      const n = c.passed + c.failed;
      const td = el("td", c.status + (n ? " " + c.passed + "/" + n : ""), c.status);
      if (c.cases.length) td.title = c.cases.join("\\n");
      tr.appendChild(td);
    }
    ob.appendChild(tr);
  }
}
sel.addEventListener("change", render);
render();
</script></body></html>
"""


def to_html(cov: Coverage) -> str:
    """One static HTML file: an opset selector, per-backend totals and a sortable op table."""
    data = json.dumps(cov.to_json()).replace("</", "<\\/")
    filt = f"; the run was filtered to ops {', '.join(cov.filters['ops'])}" if cov.filters.get("ops") else ""
    return (
        _HTML.replace("__ONNX__", html.escape(cov.onnx_version))
        .replace("__SOURCE__", html.escape(cov.source or "?"))
        .replace("__FILTER__", html.escape(filt))
        .replace("__DATA__", data)
    )


def render(cov: Coverage, fmt: str, opset: int | None = None) -> str:
    """``md``, ``json`` or ``html``."""
    if fmt == "md":
        return to_markdown(cov, opset)
    if fmt == "json":
        return to_json(cov)
    if fmt == "html":
        return to_html(cov)
    raise ReportError(f"unknown coverage format {fmt!r}; use md, json or html")
