"""Command-line and developer tools: the ``onnxport`` CLI, model checks, native file conversion, scaffolds
for new ops and plugins, and the coverage reports."""
