"""The export side: the core's ``Builder`` that backends map traced ops through, and the pipeline that
chooses and checks the opset, cleans up (``passes``), fuses patterns (``fusions``) and down-converts."""
