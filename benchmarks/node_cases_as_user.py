"""The official ONNX node cases imported into TensorFlow and called as a user calls the model.

Every node case whose ops the TensorFlow backend registers is imported with
``onnxport.import_model(model, backend="tensorflow")`` and called with its inputs exactly as the
case stores them (numpy arrays in the ONNX dtype, ml_dtypes ``int4``/``float8*``/``bfloat16``
included; sequences as lists): ``model(*inputs)``. The outputs (``.numpy()``) are compared with
the case's expected outputs under the testkit's tolerances. Nothing else is done for the model:
no eager fallback, no input conversion. Prints the pass rate and the failures grouped by error
type; ``--json PATH`` writes every case's result. Not a pass/fail test::

    PYTHONHASHSEED=0 KERAS_BACKEND=tensorflow TF_CPP_MIN_LOG_LEVEL=2 \\
        python benchmarks/node_cases_as_user.py [--json out.json] [-k SUBSTRING]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from typing import Any

import numpy as np


def _outputs(model: Any, out: Any) -> list[Any]:
    """The model's outputs as numpy, as a user reads them (``.numpy()``; sequences as lists)."""
    import onnx_ir as ir
    import tensorflow as tf

    from onnxport_tensorflow import dtypes

    outs = list(out) if isinstance(out, tuple) else [out]
    graph_types = [v.dtype for v in model._impl.program.graph.outputs]

    def host(o: Any, dt: Any) -> Any:
        if isinstance(o, (list, tuple)):
            return [host(e, dt) for e in o]
        if isinstance(o, (tf.Tensor, tf.Variable)):
            arr = np.asarray(o.numpy())
            if o.dtype == tf.string:
                arr = np.vectorize(lambda b: b.decode() if isinstance(b, bytes) else b, otypes=[object])(
                    np.asarray(arr, dtype=object)) if arr.size else np.asarray(arr, dtype=object)
            if dt is not None and dtypes.carrier(dt) is not None:
                arr = arr.astype(dtypes.to_numpy_dtype(ir.DataType(dt)))  # the documented carrier
            return arr
        return o

    return [host(o, dt) for o, dt in zip(outs, graph_types + [None] * len(outs))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None, help="write each case's result here")
    ap.add_argument("-k", default=None, help="only cases whose name contains this")
    ap.add_argument("--backend", default="tensorflow",
                    help="tensorflow: model(*inputs) read with .numpy(); another backend: its testkit "
                         "run(model, inputs) (the user's call there too)")
    args = ap.parse_args(argv)

    import onnxport
    from onnxport_testkit.cases import node_cases
    from onnxport_testkit.failures import failure_table
    from onnxport_testkit.runner import backend_object, compare_with_reference, import_tolerances, missing_ops

    backend = args.backend
    be = backend_object(backend)
    EXPECTED_FAILURES = failure_table(be)  # noqa: N806
    results: dict[str, dict[str, str]] = {}
    start = time.perf_counter()
    cases = [c for c in node_cases() if not missing_ops(backend, c.ops)]
    if args.k:
        cases = [c for c in cases if args.k in c.name]
    for case in cases:
        try:
            inputs, expected = case.data()
            model = onnxport.import_model(case.model, backend=backend)
            with np.errstate(all="ignore"):
                if backend == "tensorflow":
                    actual = _outputs(model, model(*inputs))
                else:
                    actual = list(be.run(model, inputs))
            compare_with_reference(case.model, inputs, expected, "case", actual,
                                   import_tolerances(backend, case.ops))
            results[case.name] = {"status": "pass"}
        except Exception as exc:  # noqa: BLE001 - every failure is counted and named
            kind = type(exc).__name__
            results[case.name] = {"status": "fail", "error": kind, "message": str(exc)[:300],
                                  "expected_failure": case.name in EXPECTED_FAILURES}
    passed = sum(r["status"] == "pass" for r in results.values())
    listed = sum(r.get("expected_failure", False) for r in results.values())
    total = len(results)
    print(f"{backend}: {passed}/{total} node cases pass called as model(*inputs) ({100 * passed / max(total, 1):.1f}%); "
          f"{listed} of the failures are listed expected failures; {time.perf_counter() - start:.0f} s")
    by_kind = collections.Counter(r["error"] for r in results.values() if r["status"] == "fail")
    for kind, n in by_kind.most_common():
        print(f"  {n:5d} {kind}")
        for name, r in [(k, r) for k, r in results.items() if r.get("error") == kind][:3]:
            print(f"        {name}: {r['message'][:160]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
