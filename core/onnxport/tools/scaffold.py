"""Scaffolding for contributors: import primitive files (``onnxport new-op``) and out-of-tree
plugin packages (``onnxport new-plugin``).

An op is looked up by name in every domain ``onnx.defs`` knows (``ai.onnx``, ``ai.onnx.ml``,
``ai.onnx.preview.training``, ``ai.onnx.preview``); an op of any other domain is a custom op and
gets a file with a declared ``ImportCase`` (custom ops have no official node cases).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import keyword
import re
from pathlib import Path
from typing import Any

from ..errors import OnnxportError


class ScaffoldError(OnnxportError):
    """An op, domain, plugin name or target folder that cannot be scaffolded."""


def snake(op_type: str) -> str:
    """``BatchNormalization`` -> ``batch_normalization``, ``GRU`` -> ``gru``, ``Conv2DTranspose`` -> ``conv2d_transpose``."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", op_type)
    s = re.sub(r"([a-z\d])([A-Z])", r"\1_\2", s)
    return s.lower()


def _param_name(name: str, taken: set[str]) -> str:
    s = re.sub(r"\W", "_", name).lower() or "x"
    if keyword.iskeyword(s) or s in ("ctx",) or s[0].isdigit():
        s = s + "_"
    while s in taken:
        s += "_"
    taken.add(s)
    return s


# -- finding an op ---------------------------------------------------------------------------------
@functools.cache
def onnx_domains() -> dict[str, set[str]]:
    """Every domain ``onnx.defs`` defines ops in (``''`` for ai.onnx) -> its op names."""
    import onnx.defs

    out: dict[str, set[str]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        out.setdefault(s.domain, set()).add(s.name)
    return out


def _label(domain: str) -> str:
    return domain or "ai.onnx"


@dataclasses.dataclass(frozen=True)
class FoundOp:
    """Where an op name resolved: its domain, and whether ONNX defines it (else: a custom op)."""

    op_type: str
    domain: str
    standard: bool


def split_qualified(name: str) -> tuple[str | None, str]:
    """``ai.onnx.ml::Scaler`` -> ``('ai.onnx.ml', 'Scaler')``; ``Relu`` -> ``(None, 'Relu')``."""
    if "::" in name:
        domain, op = name.rsplit("::", 1)
        from ..plugin.spec import normalize_domain

        return normalize_domain(domain), op
    return None, name


def find_op(op_type: str, domain: str | None = None) -> FoundOp:
    """Resolve an op name: in ``domain`` when given, else in every ONNX domain.

    Raises :class:`ScaffoldError` for a name ONNX does not define (with the closest names and
    their domains), and for an ONNX op asked for in the wrong ONNX domain ("did you mean --domain
    ai.onnx.ml"). A domain ONNX does not define ops in is a custom domain: any name goes.
    """
    from ..plugin.spec import normalize_domain

    q_domain, op_type = split_qualified(op_type)
    if q_domain is not None:
        if domain is not None and normalize_domain(domain) != q_domain:
            raise ScaffoldError(f"{op_type!r} is qualified with domain {_label(q_domain)!r} but --domain is {domain!r}")
        domain = q_domain
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", op_type):
        raise ScaffoldError(f"{op_type!r} is not an op name (letters, digits and '_')")
    domains = onnx_domains()
    homes = sorted(d for d, ops in domains.items() if op_type in ops)
    if domain is not None:
        domain = normalize_domain(domain)
        if domain in domains:
            if op_type in domains[domain]:
                return FoundOp(op_type, domain, True)
            if homes:
                hint = " or ".join(f"--domain {_label(d)}" for d in homes)
                raise ScaffoldError(f"ONNX defines no op {op_type!r} in domain {_label(domain)!r}: did you mean {hint}?")
            raise ScaffoldError(f"ONNX defines no op {op_type!r} in domain {_label(domain)!r}{_close(op_type)}")
        return FoundOp(op_type, domain, False)
    if "" in homes:
        return FoundOp(op_type, "", True)
    if len(homes) == 1:
        return FoundOp(op_type, homes[0], True)
    if homes:
        hint = " or ".join(f"--domain {_label(d)}" for d in homes)
        raise ScaffoldError(f"ONNX defines {op_type!r} in several domains: did you mean {hint}?")
    raise ScaffoldError(
        f"ONNX has no op {op_type!r} in any domain{_close(op_type)}. For a custom op, name its "
        "domain: --domain com.example"
    )


def _close(op_type: str) -> str:
    pool = {name: d for d, ops in onnx_domains().items() for name in ops}
    close = difflib.get_close_matches(op_type, list(pool), n=3, cutoff=0.75)
    if not close:
        lowered = {n.lower(): n for n in pool}
        close = [lowered[op_type.lower()]] if op_type.lower() in lowered else []
    if not close:
        return ""
    return ": did you mean " + " or ".join(
        f"{n}" + (f" (--domain {pool[n]})" if pool[n] else "") for n in close
    ) + "?"


# -- import primitive sources ---------------------------------------------------------------------
def scaffold(op_type: str, backend: str, domain: str = "", *, command: str | None = None, plugin: bool = False) -> str:
    """The source of a new import primitive for an ONNX op: its newest signature from the spec."""
    from ..plugin import spec as _spec

    version = _spec.latest_version(op_type, domain)
    s = _spec.get_spec(op_type, version, domain)
    taken: set[str] = set()
    params, doc_inputs = [], []
    for p in s.inputs:
        name = _param_name(p.name, taken)
        allowed = s.allowed_types(p)
        types = ", ".join(allowed[:6]) + (f" ... ({len(allowed)} types)" if len(allowed) > 6 else "")
        doc_inputs.append(f"    {name} ({p.option}): {p.name}: {types}")
        if p.option == "variadic":
            params.append(f"*{name}")
        elif p.option == "optional":
            params.append(f"{name}=None")
        else:
            params.append(name)
    has_star = any(p.startswith("*") for p in params)
    # a required input after an optional one would be a syntax error: make the rest optional
    seen_default = False
    for i, p in enumerate(params):
        if p.endswith("=None"):
            seen_default = True
        elif seen_default and not p.startswith("*"):
            params[i] = p + "=None"
    attrs = []
    for a in sorted(s.attributes.values(), key=lambda a: a.name):
        attrs.append(f"{a.py_name}={a.default!r}" if not a.required else a.py_name)
    sig = ", ".join(["ctx", *params])
    if attrs:
        sig += (", " if has_star else ", *, ") + ", ".join(attrs)
    outputs = ", ".join(p.name for p in s.outputs)
    func = _param_name(snake(op_type), set(taken))
    dom = f', domain="{domain}"' if domain else ""
    qualified = f"{domain}::{op_type}" if domain else op_type
    command = command or f"onnxport new-op {qualified} --backend {backend}"
    return f'''"""{op_type} (ONNX {_label(domain)}, version {version}) for the {backend} backend.

Generated by `{command}`. Inputs (ONNX order):
{chr(10).join(doc_inputs) or "    (none)"}
Outputs: {outputs}.
Attributes arrive as keyword arguments with the spec's defaults filled in by the core.
Run its generated tests with:
    {test_command(backend, qualified, plugin)}
"""

from __future__ import annotations

from onnxport import importer


@importer("{op_type}", since={version}{dom})
def {func}({sig}):
    raise ctx.error("{qualified} is not implemented yet: write it here")
'''


def parse_attribute(text: str) -> tuple[str, Any]:
    """``alpha=1.0`` -> ``('alpha', 1.0)``; the default is a Python literal (``axes=[0, 1]``, ``mode='x'``)."""
    import ast

    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or keyword.iskeyword(name):
        raise ScaffoldError(f"--attribute {text!r}: write NAME=DEFAULT with a Python literal default (alpha=1.0)")
    try:
        return name, ast.literal_eval(value.strip())
    except (ValueError, SyntaxError) as exc:
        raise ScaffoldError(f"--attribute {text!r}: the default {value.strip()!r} is not a Python literal") from exc


def scaffold_custom(
    op_type: str,
    backend: str,
    domain: str,
    *,
    since: int = 1,
    inputs: list[str] | None = None,
    attributes: list[tuple[str, Any]] | None = None,
    command: str | None = None,
    plugin: bool = False,
) -> str:
    """The source of a new import primitive for a custom-domain op, with a declared case stub."""
    taken: set[str] = set()
    names = [_param_name(n, taken) for n in (inputs or ["x"])]
    attrs = list(attributes or [])
    for a, _ in attrs:
        if a in taken:
            raise ScaffoldError(f"attribute {a!r} has the name of an input")
    func = _param_name(snake(op_type), set(taken))
    kw = "".join(f", {a}={v!r}" for a, v in attrs)
    sig = ", ".join(["ctx", *names]) + (f", *{kw}" if attrs else "")
    ref_sig = ", ".join(names) + (f", *{kw}" if attrs else "")
    case_inputs = "(" + ", ".join("_X" for _ in names) + ("," if len(names) == 1 else "") + ")"
    qualified = f"{domain}::{op_type}"
    command = command or f"onnxport new-op {qualified} --backend {backend}"
    return f'''"""{qualified} (custom domain, version {since}) for the {backend} backend.

Generated by `{command}`.
ONNX has no official node cases for a custom op: the declared ImportCase cases below are its
tests. Each builds a one-node model from its inputs and attributes, imports and runs it, and
compares with ``_reference`` (numpy). Add a case per attribute setting and dtype worth testing.
Run its generated tests with:
    {test_command(backend, qualified, plugin)}
"""

from __future__ import annotations

import numpy as np

from onnxport import ImportCase, importer


def _reference({ref_sig}):
    """{op_type} in numpy: what the declared cases compare the backend with."""
    raise NotImplementedError("write the numpy reference of {qualified} here")


_X = np.linspace(-3.0, 3.0, 24, dtype=np.float32).reshape(2, 3, 4)


@importer(
    "{op_type}",
    since={since},
    domain="{domain}",
    cases=[ImportCase({case_inputs}, {{}}, reference=_reference, name="defaults")],
)
def {func}({sig}):
    raise ctx.error("{qualified} is not implemented yet: write it here")
'''


def test_command(backend: str, op: str, plugin: bool = False) -> str:
    """The pytest command that runs an op's generated tests (in-tree, or in a plugin's folder)."""
    where = "tests" if plugin else "tests/test_generated.py"
    return f"python -m pytest {where} -q -n 0 --onnxport-backend {backend} --onnxport-op {op}"


# -- plugins -------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PluginLayout:
    """An out-of-tree plugin project made by :func:`new_plugin`."""

    root: Path
    package: str
    backend: str
    package_dir: Path

    @property
    def ops(self) -> Path:
        return self.package_dir / "ops"


def plugin_names(name: str) -> tuple[str, str, str]:
    """``example`` -> (entry point ``example``, distribution ``onnxport-example``, package ``onnxport_example``)."""
    short = re.sub(r"^onnxport[-_]", "", name.strip().lower())
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", short):
        raise ScaffoldError(f"plugin name {name!r}: use lowercase letters, digits, '-' and '_' (example: my-ops)")
    ep = short.replace("-", "_")
    return ep, f"onnxport-{short.replace('_', '-')}", f"onnxport_{ep}"


def new_plugin(name: str, backend: str, root: Path) -> PluginLayout:
    """Create an installable plugin project at ``root`` that adds primitives to ``backend``."""
    ep, dist, package = plugin_names(name)
    if root.exists() and any(root.iterdir()):
        raise ScaffoldError(f"{root} exists and is not empty; not overwriting it")
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{package}/__init__.py": '"""The {dist} onnxport plugin: primitives for the {backend} backend."""\n',
        f"{package}/plugin.py": _PLUGIN,
        f"{package}/expected_failures.py": _EXPECTED,
        f"{package}/ops/__init__.py": '"""One op (family) per module; every module here is registered by plugin.py."""\n',
        "tests/test_generated.py": _TESTS,
    }
    values = {"ep": ep, "dist": dist, "package": package, "backend": backend}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**values))
    return PluginLayout(root, package, backend, root / package)


def find_plugin(root: Path) -> PluginLayout:
    """The plugin project at ``root``: its package (the folder with ``plugin.py`` and ``ops/``) and backend."""
    if not root.is_dir():
        raise ScaffoldError(f"no plugin folder {str(root)!r} (create one with `onnxport new-plugin NAME`)")
    candidates = sorted(p.parent.parent for p in root.glob("*/ops/__init__.py") if (p.parent.parent / "plugin.py").is_file())
    candidates += sorted(p.parent.parent for p in root.glob("src/*/ops/__init__.py")
                         if (p.parent.parent / "plugin.py").is_file())
    if len(candidates) != 1:
        raise ScaffoldError(
            f"{root} does not hold exactly one plugin package (a folder with plugin.py and ops/__init__.py); "
            f"found {[str(c) for c in candidates]}"
        )
    pkg = candidates[0]
    backend = _pyproject_backend(root / "pyproject.toml")
    if backend is None:
        m = re.search(r"backend\s*=\s*['\"]([\w.-]+)['\"]", (pkg / "plugin.py").read_text())
        backend = m.group(1) if m else None
    if backend is None:
        raise ScaffoldError(f"cannot tell which backend {pkg / 'plugin.py'} registers into; pass --backend")
    return PluginLayout(root, pkg.name, backend, pkg)


def _pyproject_backend(path: Path) -> str | None:
    if not path.is_file():
        return None
    text = path.read_text()
    try:
        import tomllib

        return tomllib.loads(text).get("tool", {}).get("onnxport", {}).get("backend")
    except ModuleNotFoundError:  # Python 3.10
        m = re.search(r"\[tool\.onnxport\][^\[]*?backend\s*=\s*\"([\w.-]+)\"", text, re.S)
        return m.group(1) if m else None


_PYPROJECT = '''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "onnxport plugin: primitives for the {backend} backend"
requires-python = ">=3.10"
dependencies = ["onnxport", "onnxport-{backend}"]

[project.optional-dependencies]
test = ["onnxport-testkit", "pytest", "pytest-xdist"]

# onnxport loads the module named here (its hooks: plugin.py)
[project.entry-points.onnxport]
{ep} = "{package}.plugin"

[tool.setuptools.packages.find]
include = ["{package}*"]

# `onnxport new-op OP --into .` reads the backend from here
[tool.onnxport]
backend = "{backend}"

# the generated tests of this plugin's primitives only, in the {backend} backend
[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-p no:cacheprovider --onnxport-backend {backend} --onnxport-package {package}"
'''

_README = '''# {dist}

An onnxport plugin adding primitives to the `{backend}` backend.

```bash
pip install -e .                                   # registers the `{ep}` entry point
onnxport new-op OP --into .                        # scaffold an import primitive (ONNX or custom op)
python -m pytest -q -n 0                           # the generated tests of this plugin's primitives
python -m pytest -q -n 0 --onnxport-op OP          # ... of one op
```

`{package}/expected_failures.py` lists the cases that cannot pass, each with its reason.
'''

_PLUGIN = '''"""The plugin's hooks: every primitive under ``{package}.ops`` goes into the {backend} backend."""

from onnxport import hookimpl

from .expected_failures import EXPECTED_FAILURES


@hookimpl
def onnxport_register(registrar) -> None:
    registrar.discover("{package}.ops", backend="{backend}")
    registrar.add_expected_failures("{backend}", EXPECTED_FAILURES, source=__name__)
'''

_EXPECTED = '''"""This plugin's reviewed expected failures: exact case name -> the reason it cannot pass.

Keys are exact: a declared import case (``com.example::MyOp[defaults]``), an official node case
(``test_my_op``, ``test_my_op[float16]``), or an export sample (``export:my.target[0]``). A listed
case that passes fails the run, so the list stays true.
"""

EXPECTED_FAILURES: dict[str, str] = {{}}
'''

_TESTS = '''"""The generated tests of this plugin's primitives (pyproject's addopts select them)."""

from onnxport_testkit.generated import *  # noqa: F403
'''
