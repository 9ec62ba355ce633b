"""Every opset adapter's case (onnxport_testkit.adapter_cases) imported into tensorflow matches its
reference: onnxruntime on the old-opset model, or the stated numpy reference where onnxruntime cannot."""

from __future__ import annotations

import pytest

from onnxport_testkit.adapter_cases import ADAPTER_CASES, check_import


@pytest.mark.parametrize("case", ADAPTER_CASES, ids=lambda c: c.name)
def test_adapter_case_imports_into_tensorflow(case) -> None:
    check_import(case, "tensorflow")
