"""docs/ARCHITECTURE.md describes the code as it is: every file and folder of its layout block,
every repository path and every ``onnxport.`` name it quotes, exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
_NAME_COLUMN = 24  # the layout block's descriptions start here
_PY = re.compile(r"(?<![\w/.])([A-Za-z_]\w*\.py)\b")


def layout_paths(text: str) -> list[tuple[str, Path]]:
    """(line, path) for every file or folder the first code block's layout names, its description's
    bare ``name.py`` mentions included (relative to the entry's folder); ``<pkg>`` is each backend
    package."""
    block = text.split("```\n", 2)[1]
    out: list[tuple[str, Path]] = []
    stack: list[tuple[int, list[Path]]] = [(-1, [ROOT])]
    here: list[Path] = [ROOT]
    for line in block.splitlines():
        if not line.strip():
            continue
        name_part = line[:_NAME_COLUMN]
        if name_part.strip():
            indent = len(line) - len(line.lstrip())
            name = line.split()[0]
            while stack[-1][0] >= indent:
                stack.pop()
            parents = stack[-1][1]
            if name.startswith("<pkg>/"):
                parents = [pkg for parent in parents for pkg in sorted(parent.parent.glob("*/onnxport_*"))
                           if (pkg / "__init__.py").exists()]
                name = name[len("<pkg>/"):]
            paths = [parent / name.rstrip("/") for parent in parents]
            out += [(line, path) for path in paths]
            here = paths if name.endswith("/") else [path.parent for path in paths]
            if name.endswith("/"):
                stack.append((indent, paths))
            description = line[len(line) - len(line.lstrip()) + len(line.split()[0]):]
        else:
            description = line
        out += [(line, folder / m.group(1)) for m in _PY.finditer(description) for folder in here]
    return out


def test_layout_block_names_only_what_exists():
    missing = [f"{path.relative_to(ROOT)}   <- {line.strip()}" for line, path in layout_paths(DOC.read_text())
               if not path.exists()]
    assert not missing, "docs/ARCHITECTURE.md names what does not exist:\n  " + "\n  ".join(missing)


def test_quoted_paths_and_names_exist():
    text = DOC.read_text()
    missing = [p for p in re.findall(r"`((?:core|backends|testkit|opsets|tests|docs|benchmarks|examples)/[\w/.\-]*)`", text)
               if not (ROOT / p).exists()]
    for name in re.findall(r"`(onnxport(?:\.\w+)+)", text):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                missing.append(name)
            break
    assert not missing, f"docs/ARCHITECTURE.md quotes what does not exist: {missing}"


def test_the_layout_reader_sees_a_missing_module(tmp_path):
    text = "x\n```\ncore/onnxport/\n  ir/                   graph; walk.py and gone.py\n    nothere.py\n```\n"
    missing = sorted(str(p.relative_to(ROOT)) for _, p in layout_paths(text) if not p.exists())
    assert missing == ["core/onnxport/ir/gone.py", "core/onnxport/ir/nothere.py"]
