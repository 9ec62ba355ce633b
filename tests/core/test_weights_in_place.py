"""A model file's large weights are read in place at import (``onnxport.ir.filedata``): same model,
same errors, every weight bit-exact, whatever the file holds."""

from __future__ import annotations

import os
import random

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto, numpy_helper

import onnxport
from onnxport.errors import ModelError, OnnxportError
from onnxport.ir import filedata

from .._in_place import check_file_import, in_place_model

torch = pytest.importorskip("torch")
pytest.importorskip("onnxport_torch")


def _model() -> onnx.ModelProto:
    return in_place_model()


def _run(model) -> list[np.ndarray]:
    with torch.no_grad():
        out = model(torch.ones(2, 64))
    return [t.numpy() for t in out]


def test_large_initializers_become_references_into_the_file(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_model(), path)
    proto = filedata.in_place_model(path)
    data = path.read_bytes()
    moved = {t.name: t for t in proto.graph.initializer if t.data_location == TensorProto.EXTERNAL}
    assert sorted(moved) == ["fc.weight", "h", "idx"]  # the 1.2 kB bias stays inline
    original = {t.name: t for t in _model().graph.initializer}
    for name, t in moved.items():
        info = {e.key: e.value for e in t.external_data}
        assert info["location"] == path.name
        start, length = int(info["offset"]), int(info["length"])
        assert data[start:start + length] == original[name].raw_data
    assert len(proto.SerializeToString()) < 2000


def test_file_import_is_bit_exact_and_public_load_keeps_data_in_memory(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_model(), path)
    module = onnxport.import_model(path)
    state = module.state_dict()
    for t in _model().graph.initializer:
        key = module.initializer_keys.get(t.name)
        if key is not None:
            np.testing.assert_array_equal(state[key].numpy(), numpy_helper.to_array(t))
    for a, b in zip(_run(module), _run(onnxport.import_model(path.read_bytes()))):
        np.testing.assert_array_equal(a, b)
    loaded = onnxport.load(path)  # what a user gets back: no references into the file
    assert not any(isinstance(v.const_value, ir.ExternalTensor) for v in loaded.graph.initializers.values())


def test_the_file_can_be_overwritten_after_import(tmp_path):
    check_file_import(tmp_path, "torch")


def test_hard_linked_and_symlinked_model_files_import(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = tmp_path / "a" / "m.onnx"
    onnx.save(_model(), path)
    os.link(path, tmp_path / "a" / "linked.onnx")  # the model file itself, not a file it points to
    os.symlink(path, tmp_path / "b" / "elsewhere.onnx")
    expected = _run(onnxport.import_model(path.read_bytes()))
    for p in (tmp_path / "a" / "linked.onnx", tmp_path / "b" / "elsewhere.onnx"):
        for a, b in zip(_run(onnxport.import_model(p)), expected):
            np.testing.assert_array_equal(a, b)


def test_a_large_initializer_of_the_wrong_size_is_refused_naming_it(tmp_path):
    model = _model()
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:-4]
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    with pytest.raises(ModelError, match=r"fc\.weight.*raw_data holds 76796 bytes"):
        onnxport.import_model(path)


def _raw_spans(path) -> list[tuple[int, int]]:
    proto = filedata.in_place_model(path)
    spans = []
    for t in proto.graph.initializer:
        info = {e.key: e.value for e in t.external_data}
        if "offset" in info:
            spans.append((int(info["offset"]), int(info["offset"]) + int(info["length"])))
    return spans


def _outcome(source) -> tuple[str, object]:
    try:
        return "ok", _run(onnxport.import_model(source))
    except OnnxportError as exc:
        return "error", type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - the assertion below names it
        return "foreign", f"{type(exc).__name__}: {exc}"


def test_mutated_files_import_as_their_bytes_do(tmp_path):
    """Byte flips and cuts, mostly in the structure around the weights: reading in place gives the
    outcome the parsed bytes give (the same outputs, or an OnnxportError in both)."""
    clean = tmp_path / "clean.onnx"
    onnx.save(_model(), clean)
    data = clean.read_bytes()
    spans = _raw_spans(clean)
    outside = [i for i in range(len(data)) if not any(a <= i < b for a, b in spans)]
    rng = random.Random(0)
    seen = {"ok": 0, "error": 0}
    for case in range(40):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            i = rng.choice(outside) if rng.random() < 0.85 else rng.randrange(len(data))
            mutated[i] = rng.randrange(256) if rng.random() < 0.5 else mutated[i] ^ (1 << rng.randrange(8))
        if case % 8 == 7:
            mutated = mutated[: rng.randrange(len(mutated))]
        path = tmp_path / f"case{case}.onnx"
        path.write_bytes(bytes(mutated))
        in_place, parsed = _outcome(path), _outcome(bytes(mutated))
        assert in_place[0] != "foreign" and parsed[0] != "foreign", (case, in_place, parsed)
        assert in_place[0] == parsed[0], (case, in_place, parsed)
        seen[in_place[0]] += 1
        if in_place[0] == "ok":
            for a, b in zip(in_place[1], parsed[1]):
                np.testing.assert_array_equal(a, b)
    assert seen["ok"] >= 5 and seen["error"] >= 5, seen  # both kinds of outcome were compared
