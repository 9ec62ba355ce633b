"""The architecture holds: the core knows no framework, a backend knows no other backend."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("torch", "jax", "jaxlib", "tensorflow", "keras", "flax")
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_][\w]*)", re.MULTILINE)


def _imported_top_modules(folder: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for f in folder.rglob("*.py"):
        for mod in _IMPORT.findall(f.read_text()):
            found.setdefault(mod, set()).add(str(f.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("folder", ["core", "opsets"])
def test_core_imports_no_framework(folder):
    imported = _imported_top_modules(ROOT / folder)
    bad = {m: sorted(files) for m, files in imported.items() if m in FRAMEWORKS}
    assert not bad, f"the core must not import a framework: {bad}"


def test_core_distribution_does_not_depend_on_a_framework():
    requires = importlib.metadata.requires("onnxport") or []
    names = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower() for r in requires}
    assert not names & set(FRAMEWORKS), names


def test_backends_do_not_import_each_other():
    backends = [p for p in (ROOT / "backends").iterdir() if p.is_dir()]
    packages = {f"onnxport_{p.name}" for p in backends}
    for b in backends:
        imported = _imported_top_modules(b)
        others = (packages - {f"onnxport_{b.name}"}) & set(imported)
        assert not others, f"backend {b.name} imports {others}"


def test_no_eval_or_exec_in_library_code():
    pattern = re.compile(r"(?<!def )(?<![\w.`/])(eval|exec)\(")
    offenders = []
    for folder in ("core", "opsets", "backends", "testkit"):
        for f in (ROOT / folder).rglob("*.py"):
            for i, line in enumerate(f.read_text().splitlines(), 1):
                if pattern.search(line) and not line.lstrip().startswith("#"):
                    offenders.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, offenders
