"""A Keras 3 layer around an imported model (``model.keras_layer()``).

The layer's weights are ``keras.Variable``s that adopt the model's own ``tf.Variable``s (the
same storage, no copy): ``keras.Model.fit`` updates the imported model in place, and
``layer.trainable_variables`` / ``layer.non_trainable_variables`` are the model's variables.
Keras must run on the TensorFlow backend (``KERAS_BACKEND=tensorflow``, the default).
"""

from __future__ import annotations

from typing import Any

import keras


class OnnxLayer(keras.layers.Layer):
    """Runs an imported ONNX model (:class:`~onnxport_tensorflow.TfModel`) as a Keras layer.

    Call it with the graph inputs positionally (or one list/tuple of them); one output comes
    back as a tensor, several as a tuple.
    """

    def __init__(self, model: Any, adopted: dict[int, Any] | None = None, **kwargs: Any):
        if keras.backend.backend() != "tensorflow":
            raise RuntimeError(f"OnnxLayer needs Keras's TensorFlow backend, not {keras.backend.backend()!r}")
        kwargs.setdefault("name", "onnx_model")
        super().__init__(**kwargs)
        self._onnx = _Holder(model)
        # ``adopted`` (id of a tf.Variable -> its keras.Variable) lets layers that share variables
        # share their keras.Variable too, so that a shared weight is trained once
        adopted = {} if adopted is None else adopted
        for v in model.weights.values():
            if id(v) not in adopted:
                adopted[id(v)] = keras.Variable(v, trainable=v.trainable, name=v.name.split(":")[0])
        self._adopted = [adopted[id(v)] for v in model.weights.values()]
        self.built = True

    @property
    def model(self) -> Any:
        """The wrapped :class:`~onnxport_tensorflow.TfModel`."""
        return self._onnx.model

    def call(self, *inputs: Any) -> Any:
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            inputs = tuple(inputs[0])
        return self._onnx.model.forward(*inputs)


class _Holder:
    """Keeps the model out of Keras's attribute tracking (its variables are adopted instead)."""

    def __init__(self, model: Any):
        self.model = model
