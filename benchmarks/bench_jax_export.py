"""JAX export benchmark: onnxport on Flax NNX models (and jax2onnx where it is installed).

For each model (MLP, CNN, ResNet block stack, transformer encoder, GPT-style decoder with a tied
output projection): export wall time (median of N exports, tracing included), node count (Constant
nodes counted apart), Transposes, whether ``onnx.checker`` (full check) passes and the largest
difference from JAX in onnxruntime. Both sides are timed from the module and example arrays
to an ``onnx.ModelProto`` (``jax2onnx.to_onnx`` returns one; onnxport's ``ir.Model`` is
serialized inside the timing), both warmed the same way. With jax2onnx installed, the same for ``jax2onnx.to_onnx`` and
the ratios onnxport / jax2onnx in one table; without it, only onnxport's numbers (the comparison
needs jax2onnx; the reason is printed). Both export at the same opset (jax2onnx's default, 23,
where LayerNormalization, Gelu and the other fused ops exist; ``--opset`` changes it). jax2onnx
may live in another environment: ``--jax2onnx-site DIR`` adds that site-packages folder. A
model jax2onnx fails on is reported with the error. Not a pass/fail test:

    .venv/bin/python benchmarks/bench_jax_export.py [--runs 5] [--models mlp,cnn] [--opset 23]
        [--jax2onnx-site /path/to/venv/lib/python3.11/site-packages]
"""

from __future__ import annotations

import argparse
import site
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
from flax import nnx

import onnxport


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.layers = nnx.List([nnx.Linear(64, 256, rngs=rngs), nnx.Linear(256, 256, rngs=rngs),
                                nnx.Linear(256, 10, rngs=rngs)])

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nnx.gelu(layer(x))
        return self.layers[-1](x)


class CNN(nnx.Module):
    def __init__(self, rngs):
        self.convs = nnx.List([nnx.Conv(3, 16, (3, 3), rngs=rngs), nnx.Conv(16, 32, (3, 3), rngs=rngs),
                               nnx.Conv(32, 64, (3, 3), rngs=rngs)])
        self.norms = nnx.List([nnx.BatchNorm(c, rngs=rngs) for c in (16, 32, 64)])
        self.fc = nnx.Linear(64, 10, rngs=rngs)

    def __call__(self, x):
        for conv, norm in zip(self.convs, self.norms):
            x = nnx.max_pool(nnx.relu(norm(conv(x))), (2, 2), (2, 2))
        return self.fc(x.mean(axis=(1, 2)))


class Block(nnx.Module):
    def __init__(self, c, rngs):
        self.c1 = nnx.Conv(c, c, (3, 3), use_bias=False, rngs=rngs)
        self.n1 = nnx.BatchNorm(c, rngs=rngs)
        self.c2 = nnx.Conv(c, c, (3, 3), use_bias=False, rngs=rngs)
        self.n2 = nnx.BatchNorm(c, rngs=rngs)

    def __call__(self, x):
        y = nnx.relu(self.n1(self.c1(x)))
        return nnx.relu(x + self.n2(self.c2(y)))


class ResNetStack(nnx.Module):
    def __init__(self, rngs):
        self.stem = nnx.Conv(3, 32, (3, 3), rngs=rngs)
        self.blocks = nnx.List([Block(32, rngs) for _ in range(4)])
        self.fc = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.stem(x))
        for b in self.blocks:
            x = b(x)
        return self.fc(x.mean(axis=(1, 2)))


class EncoderLayer(nnx.Module):
    def __init__(self, d, heads, rngs, causal=False):
        self.attn = nnx.MultiHeadAttention(heads, d, decode=False, rngs=rngs)
        self.n1 = nnx.LayerNorm(d, rngs=rngs)
        self.n2 = nnx.LayerNorm(d, rngs=rngs)
        self.ff1 = nnx.Linear(d, 4 * d, rngs=rngs)
        self.ff2 = nnx.Linear(4 * d, d, rngs=rngs)
        self.causal = causal

    def __call__(self, x):
        mask = nnx.make_causal_mask(x[..., 0]) if self.causal else None
        x = x + self.attn(self.n1(x), mask=mask)
        return x + self.ff2(nnx.gelu(self.ff1(self.n2(x))))


class Encoder(nnx.Module):
    def __init__(self, rngs):
        self.layers = nnx.List([EncoderLayer(64, 4, rngs) for _ in range(2)])

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class GPT(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(500, 64, rngs=rngs)
        self.pos = nnx.Param(jax.random.normal(rngs.params(), (32, 64)) * 0.02)
        self.layers = nnx.List([EncoderLayer(64, 4, rngs, causal=True) for _ in range(2)])
        self.norm = nnx.LayerNorm(64, rngs=rngs)

    def __call__(self, ids):
        x = self.embed(ids) + self.pos[...][: ids.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.embed.attend(self.norm(x))  # tied output projection


def models() -> dict[str, tuple[nnx.Module, tuple[jax.Array, ...]]]:
    key = jax.random.key(0)
    out = {
        "mlp": (MLP(nnx.Rngs(0)), (jax.random.normal(key, (8, 64)),)),
        "cnn": (CNN(nnx.Rngs(0)), (jax.random.normal(key, (2, 32, 32, 3)),)),
        "resnet_blocks": (ResNetStack(nnx.Rngs(0)), (jax.random.normal(key, (2, 16, 16, 3)),)),
        "transformer_encoder": (Encoder(nnx.Rngs(0)), (jax.random.normal(key, (2, 16, 64)),)),
        "gpt_decoder": (GPT(nnx.Rngs(0)), (jax.random.randint(key, (2, 16), 0, 500),)),
    }
    for m, _ in out.values():
        m.eval()
    return out


def _count(proto: onnx.ModelProto) -> tuple[int, int, int]:
    ops = [n.op_type for n in proto.graph.node]
    return len(ops) - ops.count("Constant"), ops.count("Constant"), ops.count("Transpose")


def _measure(export, model, args, runs: int) -> dict:
    times = []
    proto = None
    for _ in range(runs):
        t0 = time.perf_counter()
        try:
            out = export(model, args)
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"}
        times.append(time.perf_counter() - t0)
        proto = ir.serde.serialize_model(out) if isinstance(out, ir.Model) else out
    nodes, consts, transposes = _count(proto)
    try:
        onnx.checker.check_model(proto, full_check=True)
        valid = "yes"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        valid = f"no ({type(exc).__name__})"
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.asarray(a) for i, a in zip(sess.get_inputs(), args)}
    got = sess.run(None, feeds)[0]
    diff = float(np.max(np.abs(got - np.asarray(model(*args)))))
    return {"time": statistics.median(times), "nodes": nodes, "consts": consts, "transposes": transposes,
            "valid": valid, "diff": diff}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--models", default="")
    ap.add_argument("--opset", type=int, default=23)
    ap.add_argument("--jax2onnx-site", default="", help="a site-packages folder holding jax2onnx")
    ns = ap.parse_args()
    chosen = set(ns.models.split(",")) if ns.models else None
    if ns.jax2onnx_site:
        site.addsitedir(ns.jax2onnx_site)
    why = ""
    try:
        import jax2onnx  # type: ignore[import-not-found]
    except ImportError as exc:
        jax2onnx, why = None, f"{type(exc).__name__}: {exc}"
    rows = []
    built = models()
    warm_model, warm_args = built["mlp"]
    onnxport.export_model(warm_model, warm_args, opset=ns.opset)  # plugin discovery, first compilations
    if jax2onnx is not None:
        jax2onnx.to_onnx(warm_model, list(warm_args), opset=ns.opset)
    for name, (model, args) in built.items():
        if chosen and name not in chosen:
            continue
        # timed to a ModelProto, as jax2onnx.to_onnx's (its default return) is
        ours = _measure(lambda m, a: ir.serde.serialize_model(onnxport.export_model(m, a, opset=ns.opset)),
                        model, args, ns.runs)
        theirs = None
        if jax2onnx is not None:  # the example arrays give shapes and dtypes (int token ids)
            theirs = _measure(lambda m, a: jax2onnx.to_onnx(m, list(a), opset=ns.opset), model, args, ns.runs)
        rows.append((name, ours, theirs))
    print(f"jax {jax.__version__}; opset {ns.opset}; median of {ns.runs} exports (tracing and serializing "
          "to a ModelProto included)"
          + (f"; jax2onnx {getattr(jax2onnx, '__version__', '?')}" if jax2onnx is not None else ""))
    head = f"{'model':22} {'export s':>9} {'nodes':>6} {'Const':>6} {'Transp':>6} {'valid':>6} {'max|diff|':>10}"
    if jax2onnx is not None:
        head += f" {'j2o s':>8} {'j2o nodes':>9} {'time ratio':>10} {'node ratio':>10}"
    print(head)
    for name, o, t in rows:
        if "error" in o:
            print(f"{name:22} onnxport failed: {o['error']}")
            continue
        line = (f"{name:22} {o['time']:9.3f} {o['nodes']:6d} {o['consts']:6d} {o['transposes']:6d} "
                f"{o['valid']:>6} {o['diff']:10.2e}")
        if t is not None and "error" in t:
            line += f"  jax2onnx failed: {t['error']}"
        elif t is not None:
            line += (f" {t['time']:8.3f} {t['nodes']:9d} {o['time'] / t['time']:10.2f} "
                     f"{o['nodes'] / max(t['nodes'], 1):10.2f}  (j2o valid {t['valid']}, max|diff| {t['diff']:.1e})")
        print(line)
    if jax2onnx is None:
        print(f"jax2onnx columns skipped: it cannot be imported ({why}); the comparison (time and node "
              "ratios) needs it (--jax2onnx-site DIR when it lives in another environment).")
    else:
        print("time ratio = onnxport / jax2onnx (target <= 0.5); node ratio = onnxport / jax2onnx nodes, "
              "Constant nodes apart (target <= 1)")


if __name__ == "__main__":
    jnp.zeros(1)  # JAX initialised before timing
    main()
