"""Meta-test: no import cycle inside the core, a backend package, the opsets or the testkit; the core's
subpackages import only from the layers below them (docs/ARCHITECTURE.md, "Layers").

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
PACKAGES += [ROOT / "core" / "onnxport", ROOT / "opsets" / "onnxport_opsets", ROOT / "testkit" / "onnxport_testkit"]

#: the core's layers, lowest first: a module imports only from its own layer and the layers before it;
#: layers of one rank (a tuple) import nothing from each other. ``onnxport`` itself (the package
#: ``__init__``) and ``onnxport._moved`` (the old module paths) sit above them all.
LAYERS: list[tuple[str, ...]] = [
    ("onnxport.errors", "onnxport.progress", "onnxport._version"),
    ("onnxport.ir",),
    ("onnxport.plugin",),
    ("onnxport.opmath",),
    ("onnxport.importing", "onnxport.exporting"),
    ("onnxport.api",),
    ("onnxport.edit",),
    ("onnxport.tools",),
]

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


def layer_of(module: str) -> tuple[int, str] | None:
    """(rank, layer) of a core module: the layer it is, or the subpackage it lies in."""
    for rank, names in enumerate(LAYERS):
        for name in names:
            if module == name or module.startswith(name + "."):
                return rank, name
    return None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for every import of a core module from a layer that is not below its own."""
    out = []
    for a, targets in sorted(graph.items()):
        la = layer_of(a)
        if la is None:
            continue
        for b in sorted(targets):
            lb = layer_of(b)
            if lb is None:
                out.append(f"{a} -> {b} (the top of the package)")
            elif lb[1] != la[1] and lb[0] >= la[0]:
                out.append(f"{a} -> {b}")
    return out


def test_every_core_module_has_a_layer():
    graph = import_graph(ROOT / "core" / "onnxport")
    homeless = [m for m in graph if layer_of(m) is None and m not in ("onnxport", "onnxport._moved")]
    assert not homeless, f"core modules in no layer of LAYERS: {homeless}"


def test_core_layers():
    found = layer_violations(import_graph(ROOT / "core" / "onnxport"))
    assert not found, "imports from a layer that is not below (docs/ARCHITECTURE.md, 'Layers'):\n  " + "\n  ".join(found)


def test_layer_check_sees_upward_and_sibling_imports():
    graph = {
        "onnxport.ir.io": {"onnxport.errors", "onnxport.ir.validate"},
        "onnxport.ir.validate": set(),
        "onnxport.plugin.registry": {"onnxport.importing.layout"},
        "onnxport.exporting.pipeline": {"onnxport.importing.plan", "onnxport.plugin.adapt"},
        "onnxport.tools.cli": {"onnxport"},
    }
    assert layer_violations(graph) == [
        "onnxport.exporting.pipeline -> onnxport.importing.plan",
        "onnxport.plugin.registry -> onnxport.importing.layout",
        "onnxport.tools.cli -> onnxport (the top of the package)",
    ]
