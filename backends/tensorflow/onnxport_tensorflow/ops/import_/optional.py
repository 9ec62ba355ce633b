"""Optional, OptionalHasElement, OptionalGetElement: an empty optional is ``None``."""

from __future__ import annotations

import numpy as np

from onnxport import ImportCase, importer


@importer("Optional", since=28, cases=[  # the official case (an If returning an optional) is a listed failure
    ImportCase((np.array([1.5, -2.0], np.float32),), {}, expected=(np.array([1.5, -2.0], np.float32),), name="wrap"),
])
def optional(ctx, x=None, *, type):
    return x


@importer("OptionalHasElement", since=28)
def optional_has_element(ctx, x=None):
    return np.array(x is not None)


@importer("OptionalGetElement", since=28)
def optional_get_element(ctx, x):
    if x is None:
        raise ctx.error("the optional is empty")
    return x
