"""Meta-test: no import cycle inside a backend package (nor the opsets and testkit packages).

The import graph is read from the source with ``ast``: every ``import`` counts, at module level,
inside functions (deferred imports) and under ``if TYPE_CHECKING:``, so a cycle cannot hide
behind a late import. A package's ``__init__`` is a node of its own; importing a submodule does
not count as importing its parent package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(p for p in (ROOT / "backends").glob("*/onnxport_*") if (p / "__init__.py").exists())
PACKAGES += [ROOT / "opsets" / "onnxport_opsets", ROOT / "testkit" / "onnxport_testkit"]

def _modules(pkg: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``)."""
    out = {}
    for f in sorted(pkg.rglob("*.py")):
        parts = list(f.relative_to(pkg.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return out


def import_graph(pkg: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (anywhere in its source)."""
    mods = _modules(pkg)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_pkg) in mods.items():
        here = name if is_pkg else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                subs = [f"{mod}.{a.name}" for a in node.names]
                # ``from pkg import name``: the submodule if ``name`` is one, else pkg itself
                targets = subs + ([mod] if any(s not in mods for s in subs) else [])
            else:
                continue
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def _describe(graph: dict[str, set[str]], comp: list[str]) -> str:
    inside = set(comp)
    return "\n".join(f"  {m} -> {', '.join(sorted(graph[m] & inside))}" for m in comp)


def test_cycle_finder_sees_deferred_and_type_checking_imports(tmp_path):
    pkg = tmp_path / "pkgx"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .c import g\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    (pkg / "d.py").write_text("import pkgx.a\n")
    graph = import_graph(pkg)
    assert graph["pkgx.a"] == {"pkgx.b"} and graph["pkgx.d"] == {"pkgx.a"}
    assert cycles(graph) == [["pkgx.a", "pkgx.b", "pkgx.c"]]
    (pkg / "c.py").write_text("import os\n")
    assert cycles(import_graph(pkg)) == []


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.name)
def test_no_import_cycle(pkg):
    graph = import_graph(pkg)
    found = cycles(graph)
    assert not found, f"import cycles in {pkg.name}:\n" + "\n\n".join(_describe(graph, c) for c in found)
