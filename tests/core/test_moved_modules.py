"""The flat core's old module paths: each gives the module at its new home itself, with a
DeprecationWarning; the repository's own code and docs use none of them; ``import onnxport``
loads no optional feature."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from onnxport._moved import MOVED

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["core", "opsets", "backends", "testkit", "tests", "examples", "benchmarks"]
#: an old path spelt in code or prose: ``onnxport.driver``, ``onnxport/driver.py`` (not the
#: function ``onnxport.registry()``)
_OLD_TEXT = re.compile(r"\bonnxport[./](" + "|".join(sorted(MOVED, key=len, reverse=True)) + r")\b(?!\()")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_new_module_with_a_warning(old):
    new = importlib.import_module(f"onnxport.{MOVED[old]}")
    sys.modules.pop(f"onnxport.{old}", None)
    with pytest.warns(DeprecationWarning, match=rf"onnxport\.{re.escape(old)} moved to onnxport\.{re.escape(MOVED[old])};"):
        module = importlib.import_module(f"onnxport.{old}")
    assert module is new
    assert module.__spec__.name == f"onnxport.{MOVED[old]}"  # still its own spec: reload, pickling


def test_from_import_and_monkeypatch_reach_the_same_module(monkeypatch):
    sys.modules.pop("onnxport.pads", None)
    with pytest.warns(DeprecationWarning):
        from onnxport import pads
    from onnxport.opmath import pads as new

    monkeypatch.setattr(pads, "_probe", 1, raising=False)
    assert new._probe == 1


def test_an_old_path_does_not_shadow_a_public_name():
    import onnxport

    sys.modules.pop("onnxport.registry", None)
    with pytest.warns(DeprecationWarning):
        from onnxport.registry import Registry
    assert callable(onnxport.registry) and onnxport.registry() is onnxport.plugin.discovery.registry()
    assert Registry is onnxport.Registry
    sys.modules.pop("onnxport.layout", None)
    with pytest.warns(DeprecationWarning):
        import onnxport.layout
    assert onnxport.layout is onnxport.importing.layout  # reached through the package's __getattr__


def _old_imports(path: Path) -> list[str]:
    """The old module paths ``path``'s imports name (relative ones resolved for core modules)."""
    tree = ast.parse(path.read_text(), str(path))
    here = None
    if (ROOT / "core") in path.parents:
        parts = list(path.relative_to(ROOT / "core").with_suffix("").parts)
        here = ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if here is None:
                    continue
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        found += [f"{path.relative_to(ROOT) if ROOT in path.parents else path}:{node.lineno}: {n}" for n in names
                  if n.startswith("onnxport.") and n[len("onnxport."):] in MOVED]
    return found


def test_the_repository_uses_no_old_module_path():
    found = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "core" / "onnxport" / "_moved.py" or path == Path(__file__).resolve():
                continue
            found += _old_imports(path)
            for i, line in enumerate(path.read_text().splitlines(), 1):
                found += [f"{path.relative_to(ROOT)}:{i}: {m.group(0)}" for m in _OLD_TEXT.finditer(line)]
    for path in [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), ROOT / "pyproject.toml", ROOT / "tox.ini"]:
        for i, line in enumerate(path.read_text().splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{i}: {m.group(0)}" for m in _OLD_TEXT.finditer(line)]
    assert not found, "old module paths (see onnxport._moved.MOVED for the new ones):\n  " + "\n  ".join(found)


def test_the_old_path_finder_sees_relative_and_absolute_imports(tmp_path):
    (tmp_path / "m.py").write_text("import onnxport.pads\nfrom onnxport import driver, api\nfrom onnxport.surgery.groups import x\n")
    assert [f.split(": ")[1] for f in _old_imports(tmp_path / "m.py")] == [
        "onnxport.pads", "onnxport.driver", "onnxport.surgery.groups"]
    assert _OLD_TEXT.findall("onnxport.layout.FORMS, core/onnxport/driver.py, onnxport.registry(), onnxport.ir.io") == [
        "layout", "driver"]


def test_import_onnxport_loads_no_optional_feature():
    code = ("import sys, onnxport\n"
            "print(sorted(m for m in sys.modules if m.startswith('onnxport')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = ast.literal_eval(out.strip())
    for feature in ("onnxport.edit.surgery", "onnxport.edit.sequential", "onnxport.tools", "onnxport.exporting"):
        assert not [m for m in loaded if m == feature or m.startswith(feature + ".")], (feature, loaded)
    assert "onnxport.edit.graph" in loaded  # the plain edits are eager: a sanity check of the probe


def test_old_cli_path_runs_as_a_script():
    out = subprocess.run([sys.executable, "-m", "onnxport.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("onnxport "), out.stderr
