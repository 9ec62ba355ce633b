"""Old module paths of the flat core, kept working for one release.

``import onnxport.pads`` (or ``from onnxport import pads``) gives the module now at
``onnxport.opmath.pads`` itself, the same object under both names, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

#: old module (under ``onnxport.``) -> its home now
MOVED: dict[str, str] = {
    "io": "ir.io",
    "validate": "ir.validate",
    "deserialize": "ir.deserialize",
    "filedata": "ir.filedata",
    "shapes": "ir.shapes",
    "safety": "ir.safety",
    "npdtypes": "ir.npdtypes",
    "registry": "plugin.registry",
    "hookspecs": "plugin.hookspecs",
    "plugins": "plugin.discovery",
    "backend": "plugin.backend",
    "backend_parts": "plugin.backend_parts",
    "spec": "plugin.spec",
    "opfacts": "plugin.opfacts",
    "pads": "opmath.pads",
    "resize": "opmath.resize",
    "rnn": "opmath.rnn",
    "signal": "opmath.signal",
    "grid": "opmath.grid",
    "col2im": "opmath.col2im",
    "slicing": "opmath.slicing",
    "sequence": "opmath.sequence",
    "constant": "opmath.constant",
    "mlops": "opmath.mlops",
    "tfidf": "opmath.tfidf",
    "driver": "importing.plan",
    "context": "importing.context",
    "program": "importing.program",
    "inputs": "importing.inputs",
    "layout": "importing.layout",
    "narrow": "importing.narrow",
    "export": "exporting.pipeline",
    "build": "exporting.builder",
    "optimize": "exporting.passes.optimize",
    "flat_matmul": "exporting.passes.flat_matmul",
    "transpose": "exporting.passes.transpose",
    "pattern_match": "exporting.fusions.pattern_match",
    "patterns": "exporting.fusions.patterns",
    "patterns_attention": "exporting.fusions.patterns_attention",
    "patterns_lstm": "exporting.fusions.patterns_lstm",
    "surgery": "edit.surgery",
    **{f"surgery.{m}": f"edit.surgery.{m}"
       for m in ("_model", "_rule_base", "_rules", "_rules_layers", "blocks", "groups", "layers", "prune", "widen")},
    "cli": "tools.cli",
    "check": "tools.check",
    "native": "tools.native",
    "scaffold": "tools.scaffold",
    "coverage": "tools.coverage",
    "coverage_html": "tools.coverage_html",
    "coverage_exchange": "tools.coverage_exchange",
}

_PREFIX = "onnxport."


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name and loads it as the module at its new one."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX) or fullname[len(_PREFIX):] not in MOVED:
            return None
        new = _PREFIX + MOVED[fullname[len(_PREFIX):]]
        warnings.warn(f"{fullname} moved to {new}; the old path works until the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=new)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(spec.loader_state)
        spec.loader_state = (spec.loader_state, module.__spec__)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # the import system stamped the old name's spec on the module: give it back its own
        module.__spec__ = module.__spec__.loader_state[1]

    def get_code(self, fullname: str) -> types.CodeType:
        """Code that runs the new module as ``__main__`` (``python -m onnxport.cli``)."""
        new = _PREFIX + MOVED[fullname[len(_PREFIX):]]
        source = f"import runpy\nrunpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n"
        return compile(source, f"<{fullname}, moved to {new}>", "exec")


class _Package(types.ModuleType):
    """The ``onnxport`` package, which the import system may not bind an old path over a name of.

    Importing ``onnxport.registry`` would set the package's ``registry`` (the function) to the
    module now at ``onnxport.plugin.registry``; an old path is reached through :func:`old_module`
    (the package's ``__getattr__``) instead.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and name in MOVED and value.__name__ != f"{self.__name__}.{name}":
            return
        super().__setattr__(name, value)


def old_module(name: str) -> types.ModuleType:
    """``onnxport.<name>`` for an old top-level module path (warning on its first import)."""
    return importlib.import_module(_PREFIX + name)


def install(package: types.ModuleType) -> None:
    """Put the finder of old module names first on ``sys.meta_path`` (once) and guard ``package``."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
    package.__class__ = _Package
