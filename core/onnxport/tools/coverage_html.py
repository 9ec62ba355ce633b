"""The coverage dashboard as one static HTML page: the matrix as compact JSON, rendered by a small
script (opset selector, search box, status filter, sortable columns, per-column totals).

A cell depends on the op's version, not on the opset, so the page stores each (op, version) once
and each row's version per opset; the script picks the cells of the opset shown.
"""

from __future__ import annotations

import html
import json
from typing import Any

from .coverage import STATUSES, Cell, Coverage, ReportError, to_json, to_markdown

#: case names kept per cell for its tooltip: failures and expected failures, then a few passing ones
_CASES = 8
_PASSING = 2


def _cell(c: Cell) -> list[Any]:
    """``[status index]`` for a cell no case ran, else ``[status index, passed, failed, xfailed(, cases)]``;
    the cases (its tooltip) are the failures and expected failures, and a few passing ones."""
    if not (c.passed or c.failed or c.xfailed):
        return [STATUSES.index(c.status)]
    out: list[Any] = [STATUSES.index(c.status), c.passed, c.failed, c.xfailed]
    bad = c.cases[: c.failed + c.xfailed]
    good = c.cases[c.failed + c.xfailed:]
    names = bad[:_CASES] + good[:_PASSING]
    hidden = len(c.cases) - len(names)
    if names:
        out.append("\n".join(names) + (f"\n... {hidden} more" if hidden > 0 else ""))
    return out


def page_data(cov: Coverage) -> dict[str, Any]:
    """The page's data: columns, rows (label, domain text, version per opset or null) and cells."""
    opsets = sorted(cov.opsets)
    rows, cells = [], []
    for op in sorted(cov.rows, key=lambda o: ("::" in o, o.lower())):
        domain, per_opset = cov.rows[op]
        rows.append([op, domain, [per_opset.get(n) for n in opsets]])
        by_version: dict[str, list[Any]] = {}
        for v in sorted({v for v in per_opset.values()}):
            by_version[str(v)] = [_cell(cov.cells[(op, v, b, d)]) for b, d in cov.columns]
        cells.append(by_version)
    return {
        "onnx": cov.onnx_version,
        "runs": cov.runs,
        "opsets": opsets,
        "columns": [list(c) for c in cov.columns],
        "statuses": list(STATUSES),
        "rows": rows,
        "cells": cells,
    }


def to_html(cov: Coverage) -> str:
    """One static HTML file: opset selector, search, status filter, totals and a sortable op table."""
    data = json.dumps(page_data(cov), separators=(",", ":")).replace("</", "<\\/")
    from .coverage_exchange import to_html as exchange_html

    page = _HTML.replace("__ONNX__", html.escape(cov.onnx_version)).replace("__DATA__", data)
    return page.replace("</script></body></html>", "</script>\n" + exchange_html(cov.exchange) + "</body></html>")


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>onnxport coverage</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.2em;color:#222}
table{border-collapse:collapse;margin:.6em 0}th,td{border:1px solid #ccc;padding:2px 7px;font-size:13px;white-space:nowrap}
th{background:#f0f0f0;cursor:pointer;user-select:none;position:sticky;top:0}
th.asc:after{content:" \\25B2"}th.desc:after{content:" \\25BC"}
.tested-passing{background:#c8f7c5}.failing{background:#f7c5c5;font-weight:bold}
.expected-failure{background:#d6e4f7}.registered-untested{background:#fff2b3}
.not-run{background:#fafafa;color:#999;font-style:italic}.missing{background:#eee;color:#888}
#totals td{text-align:right}#controls label{margin-right:1.2em}#runs{font-size:12px;color:#555}
</style></head><body>
<h1>onnxport coverage</h1>
<p>onnx __ONNX__. A cell: <span class="tested-passing">tested-passing</span>
<span class="expected-failure">expected-failure</span> (only reviewed expected failures)
<span class="failing">failing</span> <span class="registered-untested">registered-untested</span>
<span class="not-run">not-run</span> (registered; the runs were filtered to other ops)
<span class="missing">missing</span>. Hover a cell for its cases; click a header to sort.</p>
<ul id="runs"></ul>
<div id="controls">
<label>Opset <select id="opset"></select></label>
<label>Search <input id="search" type="search" placeholder="op name, e.g. conv or ai.onnx.ml" size="28"></label>
<label>Status <select id="status"><option value="">any</option></select></label>
<span id="count"></span>
</div>
<h2>Totals per backend and direction</h2><table id="totals"><thead></thead><tbody></tbody></table>
<h2>Ops</h2><table id="ops"><thead></thead><tbody></tbody></table>
<script id="coverage-data" type="application/json">__DATA__</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("coverage-data").textContent);
const S = D.statuses, $ = (id) => document.getElementById(id);
const MARK = {"tested-passing": "pass", "expected-failure": "xfail", "failing": "FAIL",
  "registered-untested": "untested", "not-run": "not run", "missing": "-"};
function el(tag, text, cls) {
  const e = document.createElement(tag); if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls; return e;
}
for (const run of D.runs) {
  const f = run.filters || {}, parts = [];
  if (f.ops && f.ops.length) parts.push("filtered to " + f.ops.join(", "));
  if (f.package) parts.push("package " + f.package);
  $("runs").appendChild(el("li", (run.report || "report") + ": " + (run.backends || []).join(", ") +
    (parts.length ? " (" + parts.join("; ") + ")" : "")));
}
D.opsets.forEach((n, i) => { const o = el("option", String(n)); o.value = i; $("opset").appendChild(o); });
$("opset").value = D.opsets.length - 1;
S.forEach((s, i) => { const o = el("option", s); o.value = i; $("status").appendChild(o); });
let sort = {col: 0, dir: 1};
function text(x) {  // as coverage.cell_text: "pass 3/3", "pass 2/2 +1 xfail", "FAIL 1/2", "xfail 2"
  const s = S[x[0]];
  if (x.length === 1) return MARK[s];
  if (s === "expected-failure") return "xfail " + x[3];
  let t = MARK[s] + (x[1] + x[2] ? " " + x[1] + "/" + (x[1] + x[2]) : "");
  return x[3] ? t + " +" + x[3] + " xfail" : t;
}
function cellsOf(r, i) {
  const v = D.rows[r][2][i];
  return v === null || v === undefined ? null : D.cells[r][String(v)];
}
function render() {
  const i = Number($("opset").value), q = $("search").value.trim().toLowerCase();
  const want = $("status").value === "" ? -1 : Number($("status").value);
  const all = [];
  for (let r = 0; r < D.rows.length; r++) { const c = cellsOf(r, i); if (c) all.push({r, c}); }
  const th = document.querySelector("#totals thead"), tb = document.querySelector("#totals tbody");
  th.replaceChildren(); tb.replaceChildren();
  const hr = el("tr"); for (const h of ["backend", "direction", ...S, "passing %"]) hr.appendChild(el("th", h));
  th.appendChild(hr);
  D.columns.forEach(([b, d], k) => {
    const n = S.map(() => 0); for (const {c} of all) n[c[k][0]]++;
    const tr = el("tr"); tr.dataset.column = b + " " + d;
    tr.appendChild(el("td", b)); tr.appendChild(el("td", d));
    S.forEach((s, j) => tr.appendChild(el("td", String(n[j]), s)));
    tr.appendChild(el("td", (100 * n[0] / Math.max(all.length, 1)).toFixed(1) + "%"));
    tb.appendChild(tr);
  });
  const oh = document.querySelector("#ops thead"), ob = document.querySelector("#ops tbody");
  oh.replaceChildren(); ob.replaceChildren();
  const r0 = el("tr");
  ["op", "version", ...D.columns.map(([b, d]) => b + " " + d)].forEach((h, k) => {
    const c = el("th", h); if (k === sort.col) c.className = sort.dir > 0 ? "asc" : "desc";
    c.addEventListener("click", () => { sort = {col: k, dir: sort.col === k ? -sort.dir : 1}; render(); });
    r0.appendChild(c);
  });
  oh.appendChild(r0);
  const shown = all.filter(({r, c}) => (!q || D.rows[r][0].toLowerCase().includes(q) ||
      D.rows[r][1].toLowerCase().includes(q)) && (want < 0 || c.some((x) => x[0] === want)));
  const key = ({r, c}) => sort.col === 0 ? D.rows[r][0].toLowerCase()
    : sort.col === 1 ? (D.rows[r][2][i] || 0) : c[sort.col - 2][0] * 1e6 - (c[sort.col - 2][1] || 0);
  shown.sort((a, b) => { const x = key(a), y = key(b);
    return (x < y ? -1 : x > y ? 1 : a.r - b.r) * sort.dir; });
  const frag = document.createDocumentFragment();
  for (const {r, c} of shown) {
    const tr = el("tr"), row = D.rows[r];
    tr.appendChild(el("td", row[0])); tr.appendChild(el("td", row[1] || String(row[2][i])));
    for (const x of c) {
      const td = el("td", text(x), S[x[0]]);
      if (x[4]) td.title = x[4];
      tr.appendChild(td);
    }
    frag.appendChild(tr);
  }
  ob.appendChild(frag);
  $("count").textContent = shown.length + " of " + all.length + " ops";
}
for (const id of ["opset", "status"]) $(id).addEventListener("change", render);
$("search").addEventListener("input", render);
render();
</script></body></html>
"""


def render(cov: Coverage, fmt: str, opset: int | None = None) -> str:
    """``md``, ``json`` or ``html``."""
    if fmt == "md":
        return to_markdown(cov, opset)
    if fmt == "json":
        return to_json(cov)
    if fmt == "html":
        return to_html(cov)
    raise ReportError(f"unknown coverage format {fmt!r}; use md, json or html")
