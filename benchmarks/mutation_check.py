"""Mutation check: plant small numeric bugs one at a time and report how many the tests kill.

Each mutant is one textual change to one source file (a convolution's output off by 3 parts in
10^4, a softmax temperature of 1.0005, a normalization epsilon 100 times too large, the tanh GELU
where the exact one is asked, an opset adapter that drops an attribute, an export primitive that
swaps the operands of Sub ...). The source trees are copied into a temporary folder, the mutant
is applied to the copy, and a targeted pytest selection runs in a subprocess whose ``PYTHONPATH``
puts the copy before the editable installs. A mutant is *killed* when the selection fails; each
selection is first run unmutated (it must pass, or its kills would mean nothing). Not a pass/fail
test; it prints one line per mutant and the kill count:

    .venv/bin/python benchmarks/mutation_check.py [--only NAME,...] [--list] [--timeout 600]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> package folder inside it that the copy must shadow
PACKAGES = {
    "core": "onnxport",
    "opsets": "onnxport_opsets",
    "testkit": "onnxport_testkit",
    "backends/torch": "onnxport_torch",
    "backends/jax": "onnxport_jax",
    "backends/tensorflow": "onnxport_tensorflow",
}
TI = "backends/torch/onnxport_torch/ops/import_"
TE = "backends/torch/onnxport_torch/ops/export"
JI = "backends/jax/onnxport_jax/ops/import_"
AD = "opsets/onnxport_opsets"


def generated(backend: str, *ops: str) -> tuple[str, ...]:
    """The generated tests of ``backend`` for ``ops``."""
    return ("tests/test_generated.py", "--onnxport-backend", backend, *(a for op in ops for a in ("--onnxport-op", op)))


@dataclass(frozen=True)
class Mutant:
    name: str
    what: str
    path: str
    old: str
    new: str
    selections: tuple[tuple[str, ...], ...] = field(default_factory=tuple)


LIGHT_TORCH = ("tests/torch/test_import_models.py", "tests/torch/test_export_light.py")

MUTANTS: list[Mutant] = [
    Mutant("torch-conv-scale", "torch Conv (functional) output * (1 + 3e-4)", f"{TI}/conv.py",
           "    return fn(x, w, b, strides, symmetric, dilations, group)\n",
           "    return fn(x, w, b, strides, symmetric, dilations, group) * (1 + 3e-4)\n",
           (generated("torch", "Conv"),)),
    Mutant("torch-conv-module-scale", "torch Conv as nn.Conv2d: weight * (1 + 3e-4)", f"{TI}/conv.py",
           '    bind(m, "weight", w)\n', '    bind(m, "weight", w * (1 + 3e-4))\n',
           (LIGHT_TORCH, generated("torch", "Conv"))),
    Mutant("torch-matmul-scale", "torch MatMul output * (1 + 3e-4)", f"{TI}/linear.py",
           "    return torch.matmul(a, b)\n", "    return torch.matmul(a, b) * (1 + 3e-4)\n",
           (generated("torch", "MatMul"),)),
    Mutant("torch-softmax-temperature", "torch Softmax of x / 1.0005", f"{TI}/softmax.py",
           "    return fn(x, dim=axis)\n", "    return fn(x / 1.0005, dim=axis)\n",
           (generated("torch", "Softmax", "LogSoftmax"), LIGHT_TORCH)),
    Mutant("torch-batchnorm-eps", "torch BatchNormalization (functional) epsilon * 100", f"{TI}/normalization.py",
           "F.batch_norm(x, mean, var, scale, bias, False, 0.0, epsilon)",
           "F.batch_norm(x, mean, var, scale, bias, False, 0.0, epsilon * 100)",
           (generated("torch", "BatchNormalization"),)),
    Mutant("torch-batchnorm-module-eps", "torch BatchNormalization as nn.BatchNorm2d: eps * 100",
           f"{TI}/normalization.py", "eps=epsilon, momentum=1 - momentum", "eps=epsilon * 100, momentum=1 - momentum",
           (LIGHT_TORCH, generated("torch", "BatchNormalization"))),
    Mutant("torch-layernorm-eps", "torch LayerNormalization epsilon * 100", f"{TI}/normalization.py",
           "inv_std = torch.rsqrt((d * d).mean(dim=dims, keepdim=True) + epsilon)",
           "inv_std = torch.rsqrt((d * d).mean(dim=dims, keepdim=True) + epsilon * 100)",
           (generated("torch", "LayerNormalization"),)),
    Mutant("torch-gelu-approx", "torch Gelu: tanh approximation where the exact one is asked", f"{TI}/activation.py",
           "    return F.gelu(x, approximate=approximate)\n", '    return F.gelu(x, approximate="tanh")\n',
           (generated("torch", "Gelu"),)),
    Mutant("adapter-gemm-drops-alpha", "Gemm-1/6 adapter drops alpha", f"{AD}/adapters/misc.py",
           'drop=("broadcast",)', 'drop=("broadcast", "alpha")',
           (generated("torch", "Gemm"), ("tests/torch/test_adapters.py",))),
    Mutant("adapter-bn7-drops-epsilon", "BatchNormalization-7 adapter drops epsilon", f"{AD}/adapters/normalization.py",
           'return ctx.rebuild(node, drop=("spatial",))', 'return ctx.rebuild(node, drop=("spatial", "epsilon"))',
           (generated("torch", "BatchNormalization"), ("tests/torch/test_adapters.py",))),
    Mutant("adapter-softmax-axis", "Softmax-11 adapter: the 2-D view's single wide dim taken as `start`",
           f"{AD}/adapters/softmax.py",
           'return ctx.rebuild(node, attributes={"axis": wide[0] if wide else start})',
           'return ctx.rebuild(node, attributes={"axis": start})',
           (generated("torch", "Softmax", "LogSoftmax"), ("tests/torch/test_adapters.py",), LIGHT_TORCH)),
    Mutant("down-layernorm-eps", "LayerNormalization down-adapter (<17) epsilon * 100", f"{AD}/down/normalization.py",
           'ctx.op("Add", var, ctx.const(eps, np_dtype))', 'ctx.op("Add", var, ctx.const(eps * 100, np_dtype))',
           (generated("torch", "aten.native_layer_norm.default", "LayerNormalization"),
            ("tests/torch/test_export.py",))),
    Mutant("export-sub-swapped", "torch export aten.sub: Sub(b, a)", f"{TE}/arithmetic.py",
           '        b = g.op("Mul", b, g.scalar(alpha, g.out_dtype()))\n    return g.op("Sub", a, b)\n',
           '        b = g.op("Mul", b, g.scalar(alpha, g.out_dtype()))\n    return g.op("Sub", b, a)\n',
           (generated("torch", "aten.sub.Tensor"),)),
    Mutant("jax-softmax-temperature", "jax Softmax of x / 1.0005", f"{JI}/softmax.py",
           "    e = jnp.exp(d)\n", "    e = jnp.exp(d / 1.0005)\n",
           (generated("jax", "Softmax"),)),
    Mutant("jax-matmul-scale", "jax MatMul output * (1 + 3e-4)", f"{JI}/linear.py",
           "    return jnp.matmul(a, b, precision=_HIGHEST, preferred_element_type=a.dtype)\n",
           "    return jnp.matmul(a, b, precision=_HIGHEST, preferred_element_type=a.dtype) * (1 + 3e-4)\n",
           (generated("jax", "MatMul"),)),
]


def copy_tree(dest: Path, root: Path = ROOT) -> None:
    """The sources, tests and tool config under ``root``, without virtual environments or caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".venv", ".tox", "build", ".pytest_cache")
    for name in ("core", "opsets", "testkit", "backends", "tests"):
        if (root / name).exists():
            shutil.copytree(root / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "tox.ini", "constraints.txt"):
        if (root / name).exists():
            shutil.copy2(root / name, dest / name)


def apply(dest: Path, mutant: Mutant) -> None:
    path = dest / mutant.path
    text = path.read_text()
    count = text.count(mutant.old)
    if count != 1:
        raise SystemExit(f"{mutant.name}: the text to mutate occurs {count} times in {mutant.path} (expected once)")
    path.write_text(text.replace(mutant.old, mutant.new))


def environment(dest: Path) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(dest / src) for src in PACKAGES if (dest / src).exists()]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("ONNXPORT_CACHE", str(Path.home() / ".cache" / "onnxport"))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_shadowing(dest: Path, env: dict[str, str]) -> None:
    """The subprocess must import the copied packages, not the editable installs."""
    for src, pkg in PACKAGES.items():
        if not (dest / src / pkg).exists():
            continue
        code = f"import importlib.util as u; s = u.find_spec({pkg!r}); print(s.origin if s else '')"
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=dest, capture_output=True, text=True).stdout.strip()
        if out and not out.startswith(str(dest)):
            raise SystemExit(f"{pkg} imports from {out}, not from the mutated copy in {dest}")


def run_selection(dest: Path, env: dict[str, str], selection: tuple[str, ...], timeout: float,
                  workers: str) -> tuple[str, float, str]:
    """('pass' | 'fail' | 'timeout', seconds, last lines)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", workers, *selection]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, cwd=dest, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start, ""
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
    if proc.returncode == 5:  # nothing collected: the selection is wrong, not a kill
        return "empty", time.monotonic() - start, tail
    return ("pass" if proc.returncode == 0 else "fail"), time.monotonic() - start, tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated mutant names")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per pytest run")
    parser.add_argument("--workers", default="2", help="pytest-xdist workers per run")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated runs of each selection")
    args = parser.parse_args(argv)
    mutants = MUTANTS
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {m.name for m in MUTANTS}
        if unknown:
            parser.error(f"unknown mutants: {sorted(unknown)}")
        mutants = [m for m in MUTANTS if m.name in wanted]
    if args.list:
        for m in mutants:
            print(f"{m.name:30s} {m.what}")
        return 0

    baseline: dict[tuple[str, ...], str] = {}
    killed = 0
    with tempfile.TemporaryDirectory(prefix="onnxport-mutants-") as tmp:
        clean = Path(tmp) / "clean"
        copy_tree(clean)
        env = environment(clean)
        check_shadowing(clean, env)
        if not args.no_baseline:
            for sel in dict.fromkeys(s for m in mutants for s in m.selections):
                status, secs, tail = run_selection(clean, env, sel, args.timeout, args.workers)
                baseline[sel] = status
                print(f"baseline {status:7s} {secs:6.0f}s  {' '.join(sel)}", flush=True)
                if status != "pass":
                    print(f"    {tail}", flush=True)
        for m in mutants:
            dest = Path(tmp) / m.name
            copy_tree(dest, clean)  # the snapshot taken at the start: later edits do not leak in
            apply(dest, m)
            menv = environment(dest)
            verdict, total, how = "survived", 0.0, ""
            for sel in m.selections:
                if baseline.get(sel, "pass") != "pass":
                    continue  # a selection that fails unmutated cannot kill
                status, secs, tail = run_selection(dest, menv, sel, args.timeout, args.workers)
                total += secs
                if status == "fail":
                    verdict, how = "KILLED", f"by {' '.join(sel)}: {tail.splitlines()[-1] if tail else ''}"
                    break
                if status in ("timeout", "empty"):
                    how = f"{status} in {' '.join(sel)}"
            killed += verdict == "KILLED"
            print(f"{verdict:8s} {total:6.0f}s  {m.name:30s} {m.what}", flush=True)
            if how:
                print(f"    {how[:300]}", flush=True)
            shutil.rmtree(dest, ignore_errors=True)
    print(f"\n{killed} of {len(mutants)} mutants killed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
