"""The plugin author's path, end to end: ``onnxport new-plugin``, ``new-op --into`` a custom-domain
op, an export primitive for a torch custom op whose samples run without onnxruntime, the plugin's
own expected failures; the package pip-installed (a real wheel build and install) and its
generated tests run by pytest in the plugin's folder, first failing on the stub, then passing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from onnxport.tools import cli

pytest.importorskip("onnxport_torch")

IMPLEMENTATION = {
    '    raise NotImplementedError("write the numpy reference of com.example::ScaledTanh here")':
        "    return (alpha * np.tanh(beta * x)).astype(x.dtype)",
    '    raise ctx.error("com.example::ScaledTanh is not implemented yet: write it here")':
        "    if not x.is_floating_point():\n"
        '        raise ctx.error(f"ScaledTanh takes float tensors, not {x.dtype}")\n'
        "    return alpha * torch.tanh(beta * x)",
    'cases=[ImportCase((_X,), {}, reference=_reference, name="defaults")],':
        'cases=[ImportCase((_X,), {}, reference=_reference, name="defaults"),\n'
        '           ImportCase((_X,), {"alpha": 2.0, "beta": 0.5}, reference=_reference, name="alpha_beta"),\n'
        '           ImportCase(((_X * 10).astype(np.int32),), {}, reference=_reference, name="int32")],',
    "import numpy as np\n": "import numpy as np\nimport torch\n",
    "from onnxport import ImportCase, importer\n": "from onnxport import ImportCase, Sample, exporter, importer\n",
}

EXPORT = '''

@torch.library.custom_op("demo::scaled_tanh", mutates_args=())
def scaled_tanh_op(x: torch.Tensor, alpha: float = 1.0, beta: float = 1.0) -> torch.Tensor:
    return alpha * torch.tanh(beta * x)


@scaled_tanh_op.register_fake
def _(x, alpha=1.0, beta=1.0):
    return torch.empty_like(x)


class ScaledTanh(torch.nn.Module):
    def __init__(self, alpha: float, beta: float) -> None:
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, x):
        return scaled_tanh_op(torch.relu(x), self.alpha, self.beta)


@exporter(
    "demo.scaled_tanh.default",
    samples=[Sample(ScaledTanh(2.0, 0.5), (torch.randn(3, 4),), emits=("Relu", "ScaledTanh"),
                    reference={"com.example::ScaledTanh": _reference}, name="reference"),
             Sample(ScaledTanh(-1.0, 1.5), (torch.randn(3, 4),), emits=("ScaledTanh",), runner="import",
                    name="import")],
)
def export_scaled_tanh(g, x, alpha=1.0, beta=1.0):
    return g.op("ScaledTanh", x, domain="com.example", alpha=float(alpha), beta=float(beta))
'''

EXPECTED = 'EXPECTED_FAILURES: dict[str, str] = {\n    "com.example::ScaledTanh[int32]": "[ConversionError] ScaledTanh takes float tensors: integer input is refused",\n}\n'


def _can_build_offline() -> bool:
    """setuptools (and, before setuptools 70.1, the wheel package) build the plugin's wheel without an index."""
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
    if (major, minor) >= (70, 1):
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


def _install(project: Path, target: Path) -> None:
    """pip-install the plugin project (wheel built from its pyproject) into ``target``."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "--target", str(target), str(project)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    eps = list(target.glob("onnxport_demo-*.dist-info/entry_points.txt"))
    assert eps and "demo = onnxport_demo.plugin" in eps[0].read_text()


def _pytest(project: Path, site: Path, *args: str) -> subprocess.CompletedProcess:
    """The plugin's own test command, in its folder, with the installed package on the path."""
    from onnxport_testkit.cases import cache_root

    env = dict(os.environ, PYTHONPATH=str(site), ONNXPORT_CACHE=str(cache_root()),
               ONNXPORT_BLOCK_PLUGINS="jax,tensorflow,example")
    # -P: the folder is not on sys.path, so the plugin is imported from where pip installed it
    return subprocess.run([sys.executable, "-P", "-m", "pytest", "-n", "0", "-rxs", "-v", *args], cwd=project,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # three subprocesses that import torch (~30-60 s); tox runs it
def test_new_plugin_new_op_install_and_generated_tests(tmp_path, capsys) -> None:
    if not _can_build_offline():
        pytest.skip("building the plugin's wheel offline needs setuptools>=70.1 (or setuptools and wheel)")
    project = tmp_path / "onnxport-demo"
    assert cli.main(["new-plugin", "demo", "--backend", "torch", "-o", str(project)]) == 0
    for rel in ("pyproject.toml", "onnxport_demo/plugin.py", "onnxport_demo/ops/__init__.py",
                "onnxport_demo/expected_failures.py", "tests/test_generated.py"):
        assert (project / rel).is_file(), rel
    assert '[project.entry-points.onnxport]\ndemo = "onnxport_demo.plugin"' in (project / "pyproject.toml").read_text()
    assert cli.main(["new-op", "ScaledTanh", "--domain", "com.example", "--into", str(project),
                     "--attribute", "alpha=1.0", "--attribute", "beta=1.0"]) == 0
    out = capsys.readouterr().out
    assert "--onnxport-op com.example::ScaledTanh" in out
    op_file = project / "onnxport_demo" / "ops" / "scaled_tanh.py"
    stub = op_file.read_text()
    assert "def scaled_tanh(ctx, x, *, alpha=1.0, beta=1.0):" in stub and "ImportCase((_X,)" in stub

    # 1. installed as scaffolded: the stub's generated tests run, and fail
    _install(project, tmp_path / "site1")
    first = _pytest(project, tmp_path / "site1")
    assert first.returncode == 1, first.stdout + first.stderr
    assert re.search(r"test_onnx_import_case\[torch-import-com.example::ScaledTanh-defaults\] FAILED", first.stdout)
    assert "1 failed, 1 passed" in first.stdout  # the declared case fails; the meta-test sees a case
    where = subprocess.run([sys.executable, "-P", "-c", "import onnxport_demo; print(onnxport_demo.__file__)"],
                           cwd=project, env=dict(os.environ, PYTHONPATH=str(tmp_path / "site1")),
                           capture_output=True, text=True)
    assert where.stdout.startswith(str(tmp_path / "site1")), where  # the installed copy is the one imported

    # 2. written (import, export with a numpy reference and with the import as runner, an expected failure)
    src = stub
    for old, new in IMPLEMENTATION.items():
        assert old in src, old
        src = src.replace(old, new)
    op_file.write_text(src + EXPORT)
    (project / "onnxport_demo" / "expected_failures.py").write_text(EXPECTED)
    _install(project, tmp_path / "site2")
    second = _pytest(project, tmp_path / "site2")
    out = second.stdout
    assert second.returncode == 0, out + second.stderr
    for name in ("test_onnx_import_case[torch-import-com.example::ScaledTanh-defaults] PASSED",
                 "test_onnx_import_case[torch-import-com.example::ScaledTanh-alpha_beta] PASSED",
                 "test_onnx_import_case[torch-import-com.example::ScaledTanh-int32] XFAIL",
                 "test_onnx_export_sample[torch-export-demo.scaled_tanh.default-reference] PASSED",
                 "test_onnx_export_sample[torch-export-demo.scaled_tanh.default-import] PASSED",
                 "test_onnx_roundtrip[torch-roundtrip-demo.scaled_tanh.default-reference] PASSED",
                 "test_onnxport_primitive_has_cases[torch-import-com.example::ScaledTanh-1] PASSED",
                 "test_onnxport_primitive_has_cases[torch-export-demo.scaled_tanh.default] PASSED",
                 "test_onnxport_expected_failures_reviewed[torch-onnxport_demo.plugin] PASSED"):
        assert name in out, name
    assert "integer input is refused" in out
    # only the plugin's primitives: no torch node case, no torch-wide meta-test
    assert "test_onnx_node_case" not in out and "hook_documented" not in out
    assert "expected_failures_reviewed[torch]" not in out

