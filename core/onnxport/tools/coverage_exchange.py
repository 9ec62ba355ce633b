"""The exchange section of the coverage dashboard: per model, the exporter x importer matrix
(passed, failed with the first failing check, not run with the reason) from the ``exchange`` rows
the testkit report holds (``tests/test_exchange.py``)."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

#: the frameworks in the order the matrix shows them (others follow, sorted)
ORDER = ("torch", "jax", "tensorflow")


def collect(reports: Iterable[dict[str, Any]]) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    """model -> (source, target) -> the row; a later report's passed/failed row wins over not_run."""
    out: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for rep in reports:
        for row in rep.get("exchange") or []:
            cells = out.setdefault(row["model"], {})
            key = (row["source"], row["target"])
            if key not in cells or cells[key]["status"] == "not_run":
                cells[key] = row
    return out


def frameworks(matrix: dict[str, dict[tuple[str, str], dict[str, Any]]]) -> list[str]:
    seen = {fw for cells in matrix.values() for key in cells for fw in key}
    return [fw for fw in ORDER if fw in seen] + sorted(seen - set(ORDER))


def cell_text(row: dict[str, Any] | None) -> str:
    """``pass``, ``FAIL outputs`` (the first failing check), ``xfail grad_step`` (reviewed) or ``not run``."""
    if row is None or row["status"] == "not_run":
        return "not run"
    if row["status"] == "passed":
        return "pass"
    if row["status"] == "xfailed":
        return f"xfail {row['check']}"
    return f"FAIL {row['check']}"


def to_markdown(matrix: dict[str, dict[tuple[str, str], dict[str, Any]]]) -> str:
    """One table per model: rows are exporters, columns importers."""
    if not matrix:
        return ""
    fws = frameworks(matrix)
    lines = ["## Exchange: exporter (row) x importer (column)", ""]
    for model in sorted(matrix):
        cells = matrix[model]
        lines += [f"### {model}", "", "| from \\ to | " + " | ".join(fws) + " |", "|---|" + "---|" * len(fws)]
        for s in fws:
            lines.append(f"| {s} | " + " | ".join(cell_text(cells.get((s, t))) for t in fws) + " |")
        lines.append("")
    return "\n".join(lines)


_CLASS = {"passed": "tested-passing", "failed": "failing", "xfailed": "expected-failure", "not_run": "not-run"}


def to_html(matrix: dict[str, dict[tuple[str, str], dict[str, Any]]]) -> str:
    """The same tables as static HTML (the dashboard's cell classes; the message as tooltip)."""
    if not matrix:
        return ""
    fws = frameworks(matrix)
    parts = ["<h2>Exchange: exporter (row) x importer (column)</h2>"]
    head = "".join(f"<th>{html.escape(t)}</th>" for t in fws)
    for model in sorted(matrix):
        cells = matrix[model]
        parts.append(f"<h3>{html.escape(model)}</h3><table class=\"exchange\"><tr><th>from \\ to</th>{head}</tr>")
        for s in fws:
            tds = []
            for t in fws:
                row = cells.get((s, t))
                cls = _CLASS[row["status"]] if row else "not-run"
                tip = html.escape((row or {}).get("message") or "", quote=True)
                tds.append(f"<td class=\"{cls}\" title=\"{tip}\">{html.escape(cell_text(row))}</td>")
            parts.append(f"<tr><th>{html.escape(s)}</th>{''.join(tds)}</tr>")
        parts.append("</table>")
    return "\n".join(parts)
