"""Every registered primitive of every installed backend against the ONNX node cases."""

from onnxport_testkit.generated import *  # noqa: F403
