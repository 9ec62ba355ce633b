"""The Keras weight-path check run on every Keras export of the TensorFlow tests (the autouse
fixture of ``tests/tensorflow/conftest.py``) and on every Keras sample of the export primitives.

Every float variable of the exported Keras object is an ONNX initializer named by its Keras path
(``dense/kernel``; the root model's own name left out), recurrent and bidirectional layers
included, and a re-import into TensorFlow holds a weight under each of those names. Exempt, as
documented: integer variables (Keras seed generators, which inference graphs do not read) and,
with ``fold_batchnorm=True``, the BatchNormalization weights folded into the Conv before them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir


def expected_paths(obj: Any, options: dict[str, Any]) -> list[str]:
    """The initializer names the export of ``obj`` (a Keras model or layer) must hold."""
    import keras

    folded: set[int] = set()
    if options.get("fold_batchnorm"):
        for layer in [obj, *obj._flatten_layers(include_self=False, recursive=True)]:
            if isinstance(layer, keras.layers.BatchNormalization):
                folded |= {id(v) for v in layer.variables}
    prefix = f"{obj.name}/"
    out = []
    for v in obj.variables:
        if id(v) in folded or not np.issubdtype(np.dtype(keras.backend.standardize_dtype(v.dtype)), np.floating):
            continue
        path = v.path
        if path.startswith(prefix) and hasattr(obj, "layers"):
            path = path[len(prefix):]
        out.append(path)
    return out


def check_keras_names(obj: Any, model: ir.Model, options: dict[str, Any], *, reimport: bool = True) -> None:
    """Assert the export ``model`` of ``obj`` keeps every Keras weight path (see the module doc),
    and that its re-import into TensorFlow restores them."""
    want = expected_paths(obj, options)
    have = set(model.graph.initializers)
    missing = [p for p in want if p not in have]
    assert not missing, (f"{type(obj).__name__} {obj.name!r}: Keras weight paths {missing} are no ONNX "
                         f"initializer names; the initializers are {sorted(have)}")
    if not reimport or not want:
        return
    import onnxport

    back = onnxport.import_model(ir.serde.serialize_model(model), backend="tensorflow")
    lost = [p for p in want if p not in back.weights]
    assert not lost, (f"{type(obj).__name__} {obj.name!r}: the TensorFlow re-import lost the Keras names {lost}; "
                      f"it holds {sorted(back.weights)}")
