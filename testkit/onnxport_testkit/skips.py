"""No silent skips in a tox env: every skip must match one entry of a reviewed allowlist.

A tox env sets ``ONNXPORT_STRICT_SKIPS`` to its name (``tox.ini``). The run then fails when a test
(or a whole module, at collection) skips for a reason that no entry of the allowlist
(``tests/allowed_skips.txt``) admits for that env, and it refuses to start when a package listed
in ``ONNXPORT_REQUIRED_PACKAGES`` (module names the env installs) cannot be imported, or one
listed in ``ONNXPORT_ABSENT_PACKAGES`` (optional packages a minimal env leaves out) can. Entries are
blocks separated by blank lines (``#`` starts a comment line):

    envs: torch jax                  (or *)
    match: regex searched in the skip reason
    why: why this skip is legitimate in these envs
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_VAR = "ONNXPORT_STRICT_SKIPS"
PACKAGES_VAR = "ONNXPORT_REQUIRED_PACKAGES"
#: modules a minimal env must not have (an optional package a hidden dependency would bring)
ABSENT_VAR = "ONNXPORT_ABSENT_PACKAGES"


@dataclass(frozen=True)
class Allowed:
    envs: tuple[str, ...]
    match: str
    why: str

    def admits(self, env: str, reason: str) -> bool:
        return ("*" in self.envs or env in self.envs) and re.search(self.match, reason) is not None


def parse_allowlist(text: str, origin: str = "allowlist") -> list[Allowed]:
    """The reviewed entries; an entry without envs, a valid regex or a reason is an error."""
    out = []
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    for i, block in enumerate(blocks):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            if not sep or key.strip() not in ("envs", "match", "why"):
                raise ValueError(f"{origin} entry {i + 1}: unknown line {line!r}")
            fields[key.strip()] = value.strip()
        if not fields:
            continue
        envs, match, why = fields.get("envs", "").split(), fields.get("match", ""), fields.get("why", "")
        if not envs or not match or not why:
            raise ValueError(f"{origin} entry {i + 1}: needs envs, match and why")
        re.compile(match)
        out.append(Allowed(tuple(envs), match, why))
    return out


def load_allowlist(path: Path) -> list[Allowed]:
    return parse_allowlist(path.read_text(), str(path))


def missing_packages(spec: str | None = None) -> list[str]:
    """The modules named in ``ONNXPORT_REQUIRED_PACKAGES`` (space- or comma-separated) that are absent."""
    names = (spec if spec is not None else os.environ.get(PACKAGES_VAR, "")).replace(",", " ").split()
    out = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(name)
    return out


def present_packages(spec: str | None = None) -> list[str]:
    """The modules named in ``ONNXPORT_ABSENT_PACKAGES`` that can be imported (found) after all."""
    names = (spec if spec is not None else os.environ.get(ABSENT_VAR, "")).replace(",", " ").split()
    return [name for name in names if name not in missing_packages(name)]


def skip_reason(report: Any) -> str | None:
    """The reason of a skipped test or collection report (None: not a skip, or an xfail)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ")


class SkipGuard:
    """Collects skip reasons of one session (the xdist controller sees every worker's reports)."""

    def __init__(self, env: str, allowed: list[Allowed]):
        self.env = env
        self.allowed = allowed
        self.unlisted: list[tuple[str, str]] = []
        self.listed = 0

    def record(self, report: Any) -> None:
        reason = skip_reason(report)
        if reason is None:
            return
        if any(a.admits(self.env, reason) for a in self.allowed):
            self.listed += 1
        else:
            self.unlisted.append((report.nodeid, reason))

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.record(report)

    def pytest_collectreport(self, report: Any) -> None:
        self.record(report)
