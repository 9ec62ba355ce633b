"""Each framework's entry point registers only where its backend is installed, and imports no
framework until that backend is used: with only the torch backend (the others blocked, as if not
installed) the plugin gives torch its contrib ops and nothing fails or loads JAX or TensorFlow."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import onnxport


def test_one_backend_installed_gets_the_ops_alone():
    code = (
        "import json, sys, onnxport\n"
        "reg = onnxport.registry()\n"
        "ops = sorted({p.op_type for p in reg.imports('torch') if p.domain == 'com.microsoft'})\n"
        "print(json.dumps({'backends': sorted(reg.backends), 'ops': ops,\n"
        "                  'frameworks': [m for m in ('jax', 'tensorflow') if m in sys.modules]}))\n"
    )
    env = {**os.environ, "ONNXPORT_BLOCK_PLUGINS": "jax,tensorflow"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["backends"] == ["torch"]
    assert found["frameworks"] == []
    assert {"Attention", "GroupQueryAttention", "MatMulNBits", "SkipLayerNormalization"} <= set(found["ops"])


def test_every_backend_gets_the_same_ops():
    reg = onnxport.registry()
    per_backend = {b: sorted((p.domain, p.op_type) for p in reg.imports(b)
                             if p.source.startswith("onnxport_ortcontrib."))
                   for b in ("torch", "jax", "tensorflow")}
    assert per_backend["torch"] == per_backend["jax"] == per_backend["tensorflow"]
    assert ("", "SimplifiedLayerNormalization") in per_backend["torch"]
