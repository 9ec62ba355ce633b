"""Fuzzing the importer with mutated models: every failure must be a clear ``OnnxportError``.

Each case is a seed model (:mod:`.fuzz_seeds`) with one to three mutations
(:mod:`.fuzz_mutators`), written to its own folder. A worker process imports and calls the
cases one by one and reports a line per case; this process watches its time and memory and
restarts it after a hang or a blow-up, charging that case. Command line::

    python -m onnxport_testkit.fuzz --cases 5000 --seed 0 --backend torch
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

#: the outcomes of a case; the first group are failures of onnxport
BAD = ("foreign", "no_message", "hang", "memory", "mismatch")
OUTCOMES = BAD + ("error", "match", "accepted_ort_rejects", "call_error_ort_runs", "not_called", "ort_hang")


def make_case(index: int, seed: int, mutators=None):
    """The ``index``-th mutated case of the run ``seed`` (deterministic); ``mutators``: the ones
    to draw from (default: all, :data:`onnxport_testkit.fuzz_mutators_more.MUTATORS`)."""
    from .fuzz_mutators_more import MUTATORS
    from .fuzz_seeds import SEEDS

    MUTATORS = tuple(mutators) if mutators else MUTATORS  # noqa: N806 - the module constant, narrowed
    rng = random.Random(seed * 1_000_003 + index)
    case = rng.choice(SEEDS)()
    applied = []
    wanted = rng.choice([1, 1, 1, 2, 3])
    for _ in range(wanted if mutators is None else 4 * wanted):  # chosen mutators: draw until they apply
        if case.raw is not None or len(applied) == wanted:
            break
        mutator = rng.choice(MUTATORS)
        try:
            what = mutator(rng, case)
        except Exception:  # noqa: BLE001 - a mutator that cannot read an already broken model skips
            what = None
        if what:
            applied.append(f"{mutator.__name__}: {what}")
    return case, applied


def write_case(case, folder: Path) -> Path:
    """Write the model and the files beside it; return the model's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    for name, target in case.symlinks:
        os.symlink(target, folder / name)
    for name, existing in case.hardlinks:
        if (folder / existing).exists():
            os.link(folder / existing, folder / name)
    path = folder / "model.onnx"
    path.write_bytes(case.raw if case.raw is not None else case.proto.SerializeToString())
    return path


# -- the worker ----------------------------------------------------------------------------
def _feeds(path: Path):
    import numpy as np
    import onnx

    proto = onnx.load(str(path), load_external_data=False)
    inits = {t.name for t in proto.graph.initializer}
    feeds = {}
    for x in proto.graph.input:
        if x.name in inits:
            continue
        tt = x.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tt.shape.dim]
        if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.float64)) > 1 << 20:
            return None
        np_dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        rng = np.random.default_rng(0)
        feeds[x.name] = rng.standard_normal(shape).astype(np_dtype)
    return feeds


def _run_case(path: Path, backend: str, report) -> dict:
    import numpy as np

    import onnxport

    be = onnxport.get_backend(backend)
    report("import")
    try:
        obj = onnxport.import_model(str(path), backend=backend)
        try:
            feeds = _feeds(path)
        except Exception:  # noqa: BLE001 - the inputs of a broken model cannot be read: not called
            feeds = None
        if feeds is None:
            return {"outcome": "not_called"}
        report("call")
        ours = be.run(obj, list(feeds.values()))
    except onnxport.OnnxportError as exc:
        ours = exc
    except BaseException as exc:  # noqa: BLE001 - the point of the fuzz test
        return {"outcome": "foreign", "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}
    if isinstance(ours, onnxport.OnnxportError):
        if not str(ours).strip():
            return {"outcome": "no_message", "detail": type(ours).__name__}
        accepted_import = report.phase == "call"
        if not accepted_import:
            return {"outcome": "error", "detail": f"{type(ours).__name__}: {str(ours)[:200]}"}
    report("ort")
    try:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        ref = sess.run(None, feeds)
    except Exception as exc:  # noqa: BLE001 - onnxruntime refusing is information, not a failure
        if isinstance(ours, onnxport.OnnxportError):
            return {"outcome": "error", "detail": f"{type(ours).__name__}: {str(ours)[:200]}"}
        return {"outcome": "accepted_ort_rejects", "detail": str(exc)[:200]}
    if isinstance(ours, onnxport.OnnxportError):
        return {"outcome": "call_error_ort_runs", "detail": f"{type(ours).__name__}: {str(ours)[:200]}"}
    if len(ours) != len(ref):
        return {"outcome": "mismatch", "detail": f"{len(ours)} outputs, onnxruntime {len(ref)}"}
    for i, (a, b) in enumerate(zip(ours, ref)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return {"outcome": "mismatch", "detail": f"output {i}: shape {a.shape} vs onnxruntime {b.shape}"}
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            if not np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-3, atol=1e-4, equal_nan=True):
                return {"outcome": "mismatch", "detail": f"output {i}: values differ"}
        elif not np.array_equal(a, b):
            return {"outcome": "mismatch", "detail": f"output {i}: values differ"}
    return {"outcome": "match"}


class _Reporter:
    def __init__(self):
        self.phase = "load"

    def __call__(self, phase: str) -> None:
        self.phase = phase
        print(json.dumps({"phase": phase}), flush=True)


def worker(paths: list[str], backend: str) -> None:
    """Run the cases at ``paths`` in order, one JSON line per phase and per result."""
    import warnings

    warnings.simplefilter("ignore")
    import onnxport  # noqa: F401 - imported before the first case so start-up is not charged to it

    onnxport.get_backend(backend)
    print(json.dumps({"ready": True}), flush=True)
    for p in paths:
        print(json.dumps({"start": p}), flush=True)
        report = _Reporter()
        result = _run_case(Path(p), backend, report)
        print(json.dumps({"result": p, **result}), flush=True)


# -- the driver ----------------------------------------------------------------------------
def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run(cases: int, seed: int = 0, backend: str = "torch", timeout: float = 20.0,
        memory: int = 1 << 30, folder: str | os.PathLike | None = None, mutators=None) -> dict:
    """Generate and run ``cases`` cases (mutated by ``mutators``, default all); returns counts per
    outcome and the bad cases."""
    tmp = tempfile.TemporaryDirectory(prefix="onnxport-fuzz-") if folder is None else None
    root = Path(tmp.name if tmp else folder)
    paths, mutations = [], {}
    for i in range(cases):
        case, applied = make_case(i, seed, mutators)
        p = write_case(case, root / f"case{i:05d}")
        paths.append(str(p))
        mutations[str(p)] = [case.name, *applied]
    results: dict[str, dict] = {}
    pending = list(paths)
    while pending:
        _drive(pending, backend, timeout, memory, results)
        pending = [p for p in pending if p not in results]
    counts = collections.Counter(r["outcome"] for r in results.values())
    bad = [{"case": p, "mutations": mutations[p], **r} for p, r in results.items() if r["outcome"] in BAD]
    if tmp:
        tmp.cleanup()
    # how many cases each mutator changed (a mutator that never applies tests nothing)
    applied = collections.Counter(m.split(":")[0] for ms in mutations.values() for m in ms[1:])
    return {"counts": dict(counts), "bad": bad, "cases": cases, "applied": dict(applied)}


def _drive(pending: list[str], backend: str, timeout: float, memory: int, results: dict) -> None:
    cmd = [sys.executable, "-c", "import sys, json; from onnxport_testkit.fuzz import worker; "
           "worker(json.loads(sys.stdin.readline()), sys.argv[1])", backend]
    # the importer's own budget for one tensor, well inside the memory this run allows (an op
    # within it may still hold several float64 temporaries of its size: a window, a Range)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1", "ONNXPORT_MAX_ELEMENTS": str(memory // 64)}
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)
    proc.stdin.write(json.dumps(pending) + "\n")
    proc.stdin.flush()
    state = {"current": None, "phase": "load", "since": None, "base": 0, "killed": None}
    lines: collections.deque = collections.deque()

    def reader():
        for line in proc.stdout:
            lines.append(line)
        lines.append(None)

    threading.Thread(target=reader, daemon=True).start()
    started = time.monotonic()
    while True:
        while lines:
            line = lines.popleft()
            if line is None:
                proc.wait()
                if state["current"] is not None and state["current"] not in results:
                    outcome = state["killed"] or "foreign"
                    if outcome in ("hang", "memory") and state["phase"] == "ort":
                        outcome = "ort_hang"
                    results[state["current"]] = {"outcome": outcome,
                                                 "detail": f"worker ended in phase {state['phase']} "
                                                           f"(exit {proc.returncode})"}
                return
            msg = json.loads(line)
            if "ready" in msg:
                state["base"] = _rss(proc.pid)
            elif "start" in msg:
                state.update(current=msg["start"], phase="load", since=time.monotonic())
            elif "phase" in msg:
                state["phase"] = msg["phase"]
            elif "result" in msg:
                results[msg["result"]] = {k: v for k, v in msg.items() if k != "result"}
                state["current"] = None
        now = time.monotonic()
        if state["current"] is None and state["since"] is None and now - started > 300:
            proc.kill()  # the worker never started
            raise RuntimeError("the fuzz worker did not start")
        if state["current"] is not None and state["killed"] is None:
            if now - state["since"] > timeout:
                state["killed"] = "hang"
                proc.kill()
            elif state["base"] and _rss(proc.pid) - state["base"] > memory:
                state["killed"] = "memory"
                proc.kill()
        time.sleep(0.02)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", default="torch")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--memory-gb", type=float, default=1.0)
    parser.add_argument("--show", type=int, default=30, help="bad cases to print")
    parser.add_argument("--mutators", help="comma-separated mutator names (default: all)")
    args = parser.parse_args(argv)
    chosen = None
    if args.mutators:
        from .fuzz_mutators_more import MUTATORS

        by_name = {m.__name__: m for m in MUTATORS}
        unknown = [n for n in args.mutators.split(",") if n not in by_name]
        if unknown:
            parser.error(f"unknown mutators {unknown}; known: {', '.join(sorted(by_name))}")
        chosen = [by_name[n] for n in args.mutators.split(",")]
    t0 = time.monotonic()
    out = run(args.cases, args.seed, args.backend, args.timeout, int(args.memory_gb * 2**30), mutators=chosen)
    print(f"{args.cases} cases in {time.monotonic() - t0:.0f} s: {json.dumps(out['counts'], sort_keys=True)}")
    for b in out["bad"][: args.show]:
        print(f"  {b['outcome']}: {b['mutations']} -> {b.get('detail', '')}")
    return 1 if out["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
