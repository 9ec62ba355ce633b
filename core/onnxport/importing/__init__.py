"""The import side: the import plan (validate, adapt, shapes, dispatch), the framework-free part of a
primitive's ``ctx``, the compiled program, call-time input checks, the layout plan and 64-bit narrowing."""
