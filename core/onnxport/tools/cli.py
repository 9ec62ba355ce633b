"""The ``onnxport`` command: info, prune, ops, check, convert, coverage, new-op, new-plugin.

Every error onnxport raises on purpose prints as one line (``onnxport: error: ...``) and exits
with status 1; usage errors exit with 2 (argparse).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, OnnxportError
from .scaffold import scaffold, snake  # noqa: F401 - snake is re-exported (onnxport.tools.cli.snake)

DEFAULT_REPORT = os.path.join("reports", "testkit.json")
#: environment variable naming the testkit report ``onnxport coverage`` reads by default
REPORT_ENV = "ONNXPORT_REPORT"


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _fmt_shape(v: Any) -> str:
    if v.shape is None:
        return "?"
    return "[" + ", ".join(str(d) if isinstance(d, int) else str(d.value or "?") for d in v.shape) + "]"


def _fmt_type(v: Any) -> str:
    if v.dtype is None:
        return "?"
    try:
        import numpy as np

        return np.dtype(v.dtype.numpy()).name
    except Exception:  # noqa: BLE001 - no numpy equivalent (string, 4-bit ...)
        return str(v.dtype.name).lower()


# -- info ------------------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
    import numpy as np

    from .. import api
    from ..errors import UnsupportedOpError
    from ..importing.plan import iter_nodes
    from ..ir import io as _io

    model = _io.load(args.model)
    _out(f"model: {args.model}")
    _out(f"ir_version: {model.ir_version}; producer: {model.producer_name or '?'} {model.producer_version or ''}".rstrip())
    _out("opset imports: " + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(model.opset_imports.items())))
    hist = collections.Counter(f"{n.domain + '::' if n.domain else ''}{n.op_type}" for n in iter_nodes(model.graph))
    params = 0
    for v in model.graph.initializers.values():
        if v.dtype is not None and v.dtype.is_floating_point() and v.shape is not None:
            params += int(np.prod([d if isinstance(d, int) else 0 for d in v.shape], dtype=np.int64))
    _out(f"nodes: {sum(hist.values())} ({len(hist)} op types); parameters: {params:,} float initializer elements")
    _out("inputs:")
    for v in model.graph.inputs:
        if not v.is_initializer():
            _out(f"  {v.name}: {_fmt_type(v)} {_fmt_shape(v)}")
    _out("outputs:")
    for v in model.graph.outputs:
        _out(f"  {v.name}: {_fmt_type(v)} {_fmt_shape(v)}")
    _out("ops:")
    for op, n in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
        _out(f"  {n:6d}  {op}")
    _out("backends:")
    names = api.backends()
    if not names:
        _out("  (none installed)")
    if getattr(args, "backend", None):
        names = [args.backend]
        api.get_backend(args.backend)  # an unknown name fails here, naming the installed ones
    for b in names:
        try:
            api.prepare(args.model, backend=b)
            _out(f"  {b}: imports every op")
        except UnsupportedOpError as exc:
            ops = sorted({f"{d + '::' if d else ''}{op}" for d, op, _, _ in exc.missing})
            _out(f"  {b}: lacks {len(ops)} op(s): {', '.join(ops)}")
        except OnnxportError as exc:
            _out(f"  {b}: cannot prepare the model: {str(exc).splitlines()[0]}")
    if getattr(args, "groups", False):
        from ..edit.surgery import size_groups

        _out(str(size_groups(model)))
    return 0


# -- prune -----------------------------------------------------------------------------------------
def cmd_prune(args: argparse.Namespace) -> int:
    from ..edit.surgery import prune_channels, size_groups
    from ..ir import io as _io

    before = size_groups(args.model)
    pruned = prune_channels(before.model, fraction=args.fraction, per=args.per, multiple_of=args.multiple_of)
    after = {g.name: g.size for g in size_groups(pruned)}
    _io.save(pruned, args.output)
    changed = [(g.name, g.size, after.get(g.name, g.size)) for g in before if after.get(g.name, g.size) != g.size]
    for name, old, new in changed:
        _out(f"  {name}: {old} -> {new} channels")
    params = [sum(int(v.const_value.size) for v in m.graph.initializers.values() if v.const_value is not None)
              for m in (before.model, pruned)]
    _out(f"pruned {len(changed)} group(s); parameters {params[0]:,} -> {params[1]:,}; wrote {args.output}")
    return 0


# -- ops -------------------------------------------------------------------------------------------
def cmd_ops(args: argparse.Namespace) -> int:
    from .. import api
    from ..plugin import spec as _spec
    from ..plugin.discovery import registry

    reg = registry()
    backends = [args.backend] if args.backend else api.backends()
    for b in backends:
        api.get_backend(b)
    rows = []
    domain = None if args.domain is None else _spec.normalize_domain(args.domain)
    if args.direction in (None, "import"):
        for b in backends:
            for p in reg.imports(b):
                if domain is not None and p.domain != domain:
                    continue
                name = f"{p.domain + '::' if p.domain else ''}{p.op_type}"
                first = _spec.versions(p.op_type, p.domain)[:1] if not p.domain else ()
                covers = f"opset {first[0]}+ (adapted)" if first and first[0] < p.since else f"opset {p.since}+"
                rows.append((b, "import", name, f"since {p.since}", covers, p.source))
    if args.direction in (None, "export") and domain is None:
        for b in backends:
            for p in reg.exports(b):
                emits = sorted({op for s in p.samples for op in s.emits})
                rows.append((b, "export", p.target, f"{len(p.samples)} sample(s)",
                             "emits " + (",".join(emits) or "?"), p.source))
    if not rows:
        _out("no primitives registered" + (f" in backend {args.backend!r}" if args.backend else "")
             + (f" in domain {domain or 'ai.onnx'!r}" if domain is not None else ""))
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        _out("  ".join(r[i].ljust(widths[i]) for i in range(5)) + "  " + r[5])
    counts = collections.Counter((r[0], r[1]) for r in rows)
    _out("; ".join(f"{b} {d}: {n}" for (b, d), n in sorted(counts.items())))
    return 0


# -- check -----------------------------------------------------------------------------------------
def cmd_check(args: argparse.Namespace) -> int:
    from ..ir import io as _io
    from . import check as _check

    model = _io.load(args.model)
    inputs = _check.load_inputs(model, args.inputs) if args.inputs else _check.random_inputs(model, seed=args.seed)
    options = _option_flags(args.backend, args.option, "import")
    result = _check.check(model, args.backend, inputs, per_node=args.per_node, rtol=args.rtol, atol=args.atol,
                          options=options)
    _out(result.summary())
    return 0 if result.ok else 3


# -- options ---------------------------------------------------------------------------------------
def _option_flags(backend: str | None, items: Sequence[str] | None, direction: str) -> dict[str, Any]:
    """The ``--option``/``--export-option NAME=VALUE`` flags as the options ``backend`` declares,
    each value parsed by its declaration (:func:`onnxport.plugin.options.parse_assignments`)."""
    from .. import api
    from ..plugin import options as _options
    from ..plugin.backend import accepted_export_options, accepted_import_options

    if not items:
        return {}
    if not backend or backend == "onnx":
        raise InputError(f"--{'export-' if direction == 'export' else ''}option needs a backend (--to/--backend)")
    be = api.get_backend(backend)
    declared = accepted_import_options(be) if direction == "import" else accepted_export_options(be)
    return _options.parse_assignments(items, declared, what=f"{direction} option of backend {backend!r}")


def cmd_options(args: argparse.Namespace) -> int:
    from .. import api
    from ..plugin import options as _options
    from ..plugin.backend import accepted_export_options, accepted_import_options

    names = [args.backend] if args.backend else api.backends()
    for name in names:
        be = api.get_backend(name)
        for direction, declared in (("import", accepted_import_options(be)), ("export", accepted_export_options(be))):
            if args.direction and direction != args.direction or not declared:
                continue
            _out(f"{name} {direction} options (--{'export-' if direction == 'export' else ''}option NAME=VALUE):")
            for line in _options.describe(declared).splitlines():
                _out(f"  {line}")
    return 0


# -- convert ---------------------------------------------------------------------------------------
def cmd_convert(args: argparse.Namespace) -> int:
    from . import native

    target = args.to or native.writer_of(args.output, args.to)
    source = native.reader_of(args.model)
    import_options = _option_flags(target, args.option, "import") if args.option else {}
    export_options = (_option_flags(source if source != "onnx" else target, args.export_option, "export")
                      if args.export_option else {})
    result = native.convert_file(args.model, args.output, to=args.to, opset=args.opset, check=args.check,
                                 import_options=import_options, export_options=export_options)
    via = f" through {args.to}" if result.source == result.target == "onnx" else ""
    _out(f"converted {result.source} {args.model} -> {result.target} {result.output}{via}")
    if result.max_diff is not None:
        _out(f"check: max |difference| from onnxruntime on random inputs: {result.max_diff:.3g}")
    return 0


# -- coverage --------------------------------------------------------------------------------------
def cmd_coverage(args: argparse.Namespace) -> int:
    from . import coverage as _cov
    from .coverage_html import render

    reports = args.report or [os.environ.get(REPORT_ENV) or DEFAULT_REPORT]
    fmt = args.format or _format_from_path(args.output)
    opsets = [args.opset] if args.opset is not None and fmt != "md" else None
    cov = _cov.from_reports(reports, opsets)
    text = render(cov, fmt, args.opset)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text)
        _out(f"coverage ({fmt}) written to {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _format_from_path(path: str | None) -> str:
    if path and path.endswith((".html", ".htm")):
        return "html"
    if path and path.endswith(".json"):
        return "json"
    return "md"


# -- new-op, new-plugin ---------------------------------------------------------------------------------
def _backend_import_dir(backend: str, root: str | None) -> Path:
    if root:
        return Path(root) / "backends" / backend / f"onnxport_{backend}" / "ops" / "import_"
    import importlib.util

    try:
        found = importlib.util.find_spec(f"onnxport_{backend}.ops.import_")
    except ModuleNotFoundError:
        found = None
    if found is not None and found.submodule_search_locations:
        return Path(list(found.submodule_search_locations)[0])
    return Path("backends") / backend / f"onnxport_{backend}" / "ops" / "import_"


def cmd_new_op(args: argparse.Namespace) -> int:
    from ..plugin.discovery import registry
    from . import scaffold as _sc

    plugin = _sc.find_plugin(Path(args.into)) if args.into else None
    backend = args.backend or (plugin.backend if plugin else None)
    if not backend:
        raise OnnxportError("new-op needs --backend B (or --into PLUGIN_DIR, whose pyproject names the backend)")
    found = _sc.find_op(args.op, args.domain)
    qualified = f"{found.domain}::{found.op_type}" if found.domain else found.op_type
    command = f"onnxport new-op {qualified} --backend {backend}"
    if found.standard:
        if args.inputs or args.attribute or args.since is not None:
            raise OnnxportError(f"{qualified} is an ONNX op: its inputs, attributes and version come from the spec")
        source = scaffold(found.op_type, backend, found.domain, command=command, plugin=plugin is not None)
    else:
        attributes = [_sc.parse_attribute(a) for a in args.attribute or []]
        inputs = [n.strip() for n in args.inputs.split(",") if n.strip()] if args.inputs else None
        source = _sc.scaffold_custom(found.op_type, backend, found.domain, since=args.since or 1,
                                     inputs=inputs, attributes=attributes, command=command,
                                     plugin=plugin is not None)
    folder = plugin.ops if plugin else _backend_import_dir(backend, args.root)
    if not folder.is_dir():
        raise OnnxportError(f"no primitive folder {str(folder)!r} for backend {backend!r} (use --root REPO or --into DIR)")
    target = folder / f"{snake(found.op_type)}.py"
    if target.exists():
        raise OnnxportError(f"{target} exists; not overwriting it")
    try:
        reg = registry()
        existing = [p for p in reg.imports(backend) if p.op_type == found.op_type and p.domain == found.domain]
    except OnnxportError:
        existing = []
    if existing and not args.force:
        raise OnnxportError(
            f"{qualified} is already registered in {backend} ({existing[-1].source}, since {existing[-1].since}); "
            "pass --force to scaffold a second file anyway"
        )
    target.write_text(source)
    if found.domain and found.standard:
        _out(f"found {found.op_type} in domain {found.domain}")
    _out(f"wrote {target}")
    if plugin:
        _out(f"test it (in {plugin.root}, once installed: pip install -e .): "
             + _sc.test_command(backend, qualified, plugin=True))
    else:
        _out("test it: " + _sc.test_command(backend, qualified))
    return 0


def cmd_new_plugin(args: argparse.Namespace) -> int:
    from . import scaffold as _sc

    ep, dist, _ = _sc.plugin_names(args.name)
    root = Path(args.output or dist)
    layout = _sc.new_plugin(args.name, args.backend, root)
    _out(f"wrote plugin {dist} (entry point {ep!r} -> {layout.package}.plugin) in {root}")
    _out(f"next: cd {root} && pip install -e . && onnxport new-op OP --into . && python -m pytest -q -n 0")
    return 0


# -- main --------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from .._version import __version__

    p = argparse.ArgumentParser(prog="onnxport", description="Move neural networks in and out of ONNX.")
    p.add_argument("--version", action="version", version=f"onnxport {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("info", help="opsets, op histogram, parameters, inputs/outputs, backend support")
    s.add_argument("model")
    s.add_argument("--groups", action="store_true", help="also list the size groups (channels that resize together)")
    s.add_argument("--backend", help="ask only this backend (default: every installed backend; each one "
                   "asked imports its framework)")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("prune", help="remove the lowest-L1 channels, keeping every size group aligned")
    s.add_argument("model")
    s.add_argument("--fraction", type=float, required=True, help="fraction of channels to remove, in [0, 1)")
    s.add_argument("--per", choices=["layer", "global"], default="layer", help="rank channels per group or globally")
    s.add_argument("--multiple-of", type=int, default=1, help="keep channel counts a multiple of this (e.g. 8)")
    s.add_argument("--output", "-o", required=True)
    s.set_defaults(func=cmd_prune)

    s = sub.add_parser("ops", help="registered primitives, their versions and source")
    s.add_argument("--backend")
    s.add_argument("--direction", choices=["import", "export"])
    s.add_argument("--domain", help="only import primitives of this op domain ('ai.onnx' or '' for the default, "
                                    "'com.microsoft' ...)")
    s.set_defaults(func=cmd_ops)

    s = sub.add_parser("check", help="run a model in a backend and in onnxruntime and compare")
    s.add_argument("model")
    s.add_argument("--backend", required=True)
    s.add_argument("--per-node", action="store_true", help="compare every intermediate value; name the first diverging node")
    s.add_argument("--inputs", help="an .npz with the inputs (by input name, or arr_0 ... in order)")
    s.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    s.add_argument("--rtol", type=float, default=1e-3)
    s.add_argument("--atol", type=float, default=1e-4)
    s.add_argument("--option", "-O", action="append", metavar="NAME=VALUE",
                   help="an import option of the backend (repeatable; `onnxport options` lists them)")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("options", help="the import and export options each backend accepts")
    s.add_argument("--backend", help="only this backend (default: every installed one)")
    s.add_argument("--direction", choices=["import", "export"])
    s.set_defaults(func=cmd_options)

    s = sub.add_parser("convert", help="ONNX or native files in, ONNX or native files out (the suffix picks the target)")
    s.add_argument("model", help="an .onnx file, a .pt2 program, a SavedModel folder, a .keras file or a JAX folder")
    s.add_argument("--output", "-o", required=True,
                   help=".onnx, .pt2 (torch.export program), .pt (state dict + torch.save'd module), "
                        "or a folder with --to tensorflow (SavedModel) / --to jax (params.npz + model.onnx)")
    s.add_argument("--to", "--backend", dest="to",
                   help="the target backend (needed for a folder; with .onnx in and out: the framework to go through)")
    s.add_argument("--opset", type=int, help="opset of the exported model (an .onnx input is converted to it "
                                             "through the adapters; .onnx in and out with --opset only converts)")
    s.add_argument("--check", action="store_true",
                   help="run the result and onnxruntime on random inputs and print the max difference")
    s.add_argument("--option", "-O", action="append", metavar="NAME=VALUE",
                   help="an import option of the target backend (repeatable; `onnxport options` lists them)")
    s.add_argument("--export-option", action="append", metavar="NAME=VALUE",
                   help="an export option of the framework the model is exported from (repeatable)")
    s.set_defaults(func=cmd_convert)

    s = sub.add_parser("coverage", help="op x opset x backend x direction coverage from testkit reports")
    s.add_argument("--opset", type=int, help="the opset to show (md: the op table; json/html: only this opset)")
    s.add_argument("--format", choices=["md", "html", "json"], help="default: from --output's suffix, else md")
    s.add_argument("--report", action="append",
                   help="a testkit JSON report (pytest --onnxport-report), or a folder of testkit*.json; repeat "
                        f"to merge the runs of several backends into one page; default ${REPORT_ENV} or {DEFAULT_REPORT}")
    s.add_argument("--output", "-o", help="write here instead of stdout")
    s.set_defaults(func=cmd_coverage)

    s = sub.add_parser("new-op", help="scaffold an import primitive file for an ONNX or custom-domain op")
    s.add_argument("op", help="an op name (looked up in every ONNX domain) or DOMAIN::OP")
    s.add_argument("--backend", help="the backend (default with --into: the plugin's)")
    s.add_argument("--domain", default=None, help="the op's domain: ai.onnx.ml ..., or a custom one (com.example)")
    s.add_argument("--root", help="repository root holding backends/ (default: the installed backend package)")
    s.add_argument("--into", help="an out-of-tree plugin folder (from `onnxport new-plugin`): write into its ops/")
    s.add_argument("--since", type=int, help="custom ops: the op's version (default 1)")
    s.add_argument("--inputs", help="custom ops: input names, comma-separated (default x)")
    s.add_argument("--attribute", action="append", metavar="NAME=DEFAULT",
                   help="custom ops: an attribute and its default, a Python literal (repeatable)")
    s.add_argument("--force", action="store_true", help="scaffold even if the op is already registered")
    s.set_defaults(func=cmd_new_op)

    s = sub.add_parser("new-plugin", help="create an out-of-tree plugin package (entry point, ops/, tests)")
    s.add_argument("name", help="plugin name: the entry point; the package is onnxport_NAME")
    s.add_argument("--backend", default="torch", help="the backend its primitives go into (default torch)")
    s.add_argument("--output", "-o", help="the folder to create (default ./onnxport-NAME)")
    s.set_defaults(func=cmd_new_plugin)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``onnxport`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except OnnxportError as exc:
        msg = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        sys.stderr.write(f"onnxport: error: {type(exc).__name__}: {msg}\n")
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
