"""Start-up benchmark: what every command pays before a model is touched.

Each measurement runs in a fresh interpreter (one run each, wall seconds), with byte-code caches
written as an installed package has them (``PYTHONDONTWRITEBYTECODE`` is dropped for the runs):

- ``import onnxport``;
- the first registry use (``onnxport.registry()``, plugin discovery) and the backend names;
- ``import <framework>`` alone (torch / jax / tensorflow), the floor of a backend's start-up;
- the first use of one backend: ``import onnxport`` + ``registry().find_import(<backend>, Relu)``
  (that backend's primitives), printed next to its framework's import;
- ``onnxport info <light model> --backend <backend>`` (the CLI end to end), and ``onnxport info``
  without ``--backend`` (every installed backend is asked);
- the first import of a tiny transformer (a token embedding and an encoder) into torch, beyond
  ``import torch`` (target: under 0.5 s).

Not a pass/fail test::

    .venv/bin/python benchmarks/bench_startup.py [--model squeezenet]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

FRAMEWORKS = {"torch": "torch", "jax": "jax", "tensorflow": "tensorflow"}


def _run(code: str | None = None, argv: list[str] | None = None) -> tuple[float, str]:
    """Wall time of a fresh interpreter running ``code`` (or ``argv``), and its stdout."""
    cmd = [sys.executable, "-c", code] if code is not None else argv
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: .pyc kept
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    dt = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{out.stderr[-2000:]}")
    return dt, out.stdout


def _timed(code: str) -> float:
    """Seconds spent inside ``code`` (the interpreter's own start excluded)."""
    _, out = _run("import time; _t = time.perf_counter()\n" + code + "\nprint(time.perf_counter() - _t)")
    return float(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="squeezenet", help="a light_* model the onnx package ships")
    opts = ap.parse_args()
    from onnxport_testkit.light import light_models

    model = str(light_models()[opts.model])
    onnxport_cli = [sys.executable, "-m", "onnxport.tools.cli"]

    # one untimed pass first writes the byte-code caches an installed package has
    _run("import onnxport, torch, jax, tensorflow; r = onnxport.registry(); r.load()")
    t_import = _timed("import onnxport")
    t_registry = _timed("import onnxport\n_t = time.perf_counter(); onnxport.registry(); onnxport.backends()")
    _, names = _run("import onnxport; print(','.join(onnxport.backends()))")
    backends = [b for b in names.strip().split(",") if b]
    print(f"{'import onnxport':48} {t_import:7.2f} s")
    print(f"{'first registry use (discovery, backend names)':48} {t_registry:7.2f} s   backends: {', '.join(backends)}")
    for b in backends:
        fw = FRAMEWORKS.get(b)
        t_fw = _timed(f"import {fw}") if fw else float("nan")
        t_first = _timed("import onnxport\n_t = time.perf_counter()\n"
                         f"assert onnxport.registry().find_import({b!r}, '', 'Relu', 14) is not None")
        t_info, _ = _run(argv=[*onnxport_cli, "info", model, "--backend", b])
        over = t_first - t_fw
        print(f"{b:12} import {fw:12} {t_fw:6.2f} s   first use of the backend {t_first:6.2f} s "
              f"(+{over:5.2f} s over its framework)   onnxport info --backend {b}: {t_info:6.2f} s")
    t_all, _ = _run(argv=[*onnxport_cli, "info", model])
    print(f"{'onnxport info (every backend asked)':48} {t_all:7.2f} s")
    if "torch" in backends:
        path = _tiny_transformer()
        t_tiny = _timed(f"import torch\n_t = time.perf_counter()\nimport onnxport\nonnxport.import_model({path!r})")
        print(f"{'tiny transformer import, beyond import torch':48} {t_tiny:7.2f} s   (target < 0.5 s)")


def _tiny_transformer() -> str:
    """A token embedding (a Gather-as-embedding) and a 2-layer encoder, exported to a temp file."""
    import tempfile
    import warnings

    import torch
    from torch import nn

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(100, 32)
            layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

        def forward(self, ids):
            return self.encoder(self.embed(ids))

    path = os.path.join(tempfile.mkdtemp(prefix="bench_startup_"), "tiny.onnx")
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(Tiny().eval(), (torch.randint(0, 100, (2, 8)),), path, dynamo=False,
                          input_names=["ids"], dynamic_axes={"ids": {0: "b", 1: "s"}}, opset_version=17)
    torch.backends.mha.set_fastpath_enabled(fastpath)
    return path


if __name__ == "__main__":
    main()
