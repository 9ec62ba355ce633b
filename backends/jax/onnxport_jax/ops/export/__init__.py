"""Export primitives: one JAX primitive (``lax.<name>``) -> ONNX nodes, one file per op family.

Each primitive is ``fn(g, *operands, **params)``: ``g`` is :class:`onnxport_jax.exporter.JaxGraph`
(``g.eqn`` the equation, ``g.out_aval(i)`` its result types), operands are ``onnx_ir.Value``\\ s
and ``params`` the equation's parameters as JAX holds them. Return a value, or a tuple for
multi-output primitives. Samples are JAX functions on JAX arrays.
"""
