"""The generated tests of the plugin's primitives: every declared case of every contrib op, in
each backend given with ``--onnxport-backend``, against onnxruntime (run with
``--onnxport-package onnxport_ortcontrib``, as tox's ``ortcontrib`` env does)."""

from onnxport_testkit.generated import *  # noqa: F403
