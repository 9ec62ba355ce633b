"""onnxruntime's contrib ops (domain ``com.microsoft``, and the ops onnxruntime adds to the default
domain) as onnxport import primitives for torch, JAX and TensorFlow.

Written against onnxport's public plugin API only: ``onnxport.importer``, ``onnxport.ImportCase``,
``onnxport.hookimpl`` and the registrar a plugin's ``onnxport_register`` hook receives. The
numpy-only parts (the declared test cases, shared shape and packing arithmetic) live once in
:mod:`onnxport_ortcontrib.cases` and :mod:`onnxport_ortcontrib.opmath`; each framework has one
file per op family under ``onnxport_ortcontrib/<framework>/``, with the same file names.
"""

#: the domain of onnxruntime's contrib ops
DOMAIN = "com.microsoft"

__all__ = ["DOMAIN"]
