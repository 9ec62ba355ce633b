"""Conv and ConvInteger on ``tf.nn.convolution`` (channels last, as TensorFlow runs on CPU)."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._padding import resolve_pads, same_pads, spatial_settings


def to_last(x, nd: int):
    """N C spatial... -> N spatial... C."""
    return tf.transpose(x, [0, *range(2, nd + 2), 1])


def to_first(x, nd: int):
    """N spatial... C -> N C spatial...."""
    return tf.transpose(x, [0, nd + 1, *range(1, nd + 1)])


def weight_hwio(w, nd: int):
    """O I spatial... -> spatial... I O."""
    return tf.transpose(w, [*range(2, nd + 2), 1, 0])


def _pad(x, pads, nd, value=0):
    if not any(pads):
        return x
    cfg = [[0, 0]] + [[pads[i], pads[nd + i]] for i in range(nd)] + [[0, 0]]
    return tf.pad(x, cfg, constant_values=value)


def conv_last(x, w, strides, pads, dilations, group):
    """A convolution of a channels-last ``x`` with spatial-major (``...IO``) weights ``w``.

    The kernel pads (no padded copy of the input): a 2-D ungrouped convolution with its pads as
    explicit paddings, a 2-D depthwise or grouped one whose pads are SAME's with SAME; the other
    forms convolve a padded copy (TensorFlow 2.21's depthwise kernel aborts the process on
    explicit paddings under oneDNN)."""
    nd = len(strides)
    c = x.shape[-1]
    depthwise = nd == 2 and c == group and w.shape[2] == 1 and (max(strides) == 1 or max(dilations) == 1)
    spatial = x.shape[1:-1]
    if nd == 2 and any(pads) and group == 1:
        padding = [[0, 0]] + [[pads[i], pads[nd + i]] for i in range(nd)] + [[0, 0]]
    elif (nd == 2 and any(pads) and (depthwise or _ONEDNN) and None not in spatial
          and list(pads) == same_pads(spatial, w.shape[:2], strides, dilations, "SAME_UPPER")):
        padding = "SAME"
    else:
        x, padding = _pad(x, pads, nd), "VALID"
    if nd == 1:  # as 2-D with a unit height
        y = conv_last(x[:, None], w[None], [1, *strides], [0] * 4, [1, *dilations], group)
        return y[:, 0]
    if group == 1:
        if nd == 2:
            return tf.nn.conv2d(x, w, strides=strides, padding=padding, dilations=dilations)
        return tf.nn.convolution(x, w, strides=strides, padding="VALID", dilations=dilations)
    if depthwise:
        m = w.shape[3] // c  # depthwise: output channel o = c * m + j
        return tf.nn.depthwise_conv2d(x, tf.reshape(w, [*w.shape[:2], c, m]), [1, *strides, 1], padding,
                                      dilations=dilations)
    if nd == 2 and _ONEDNN:
        return grouped_native(x, w, strides, dilations, group, padding)
    return grouped_split(x, w, strides, dilations, group)


def grouped_split(x, w, strides, dilations, group, padding="VALID"):
    """A grouped convolution as one convolution per group (split, convolve, concatenate)."""
    og = w.shape[-1] // group
    xs = tf.split(x, group, axis=-1)
    return tf.concat([
        tf.nn.convolution(xs[g], w[..., g * og:(g + 1) * og], strides=strides, padding=padding,
                          dilations=dilations) for g in range(group)], axis=-1)


def grouped_native(x, w, strides, dilations, group, padding="VALID"):
    """A 2-D grouped convolution as one Conv2D (TensorFlow reads the groups from the filter's
    in-channels, C / group); its gradient is the split form's (TensorFlow's own grouped Conv2D
    gradients fail on CPU without oneDNN)."""

    @tf.custom_gradient
    def run(x, w):
        y = tf.nn.convolution(x, w, strides=strides, padding=padding, dilations=dilations)

        def grad(dy):
            with tf.GradientTape() as tape:
                tape.watch([x, w])
                ys = grouped_split(x, w, strides, dilations, group, padding)
            return tape.gradient(ys, [x, w], output_gradients=dy)

        return y, grad

    return run(x, w)


def _onednn_enabled() -> bool:
    """Whether TensorFlow runs its CPU kernels through oneDNN (grouped Conv2D is then one kernel,
    0.75x the split form's time at 28x28x272, 4 groups; without oneDNN it is slower than the split)."""
    try:
        from tensorflow.python.util import _pywrap_util_port

        return bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        return False


_ONEDNN = _onednn_enabled()


def conv_values(x, w, b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides, cl=False,
                hwio=False):
    """Conv (``cl``: ``x`` and the result channels last; ``hwio``: weights spatial-major)."""
    x = tf.convert_to_tensor(x)
    w = tf.convert_to_tensor(w, x.dtype)
    nd = len(w.shape) - 2
    kernel, strides, dilations = spatial_settings(
        nd, kernel_shape or (w.shape[:nd] if hwio else w.shape[2:]), strides, dilations)
    spatial = x.shape[1:-1] if cl else x.shape[2:]
    pads = resolve_pads(auto_pad, pads, [int(s) for s in spatial] if auto_pad.startswith("SAME") else spatial,
                        kernel, strides, dilations)
    xl = x if cl else to_last(x, nd)
    wl = w if hwio else weight_hwio(w, nd)
    y = conv_last(xl, wl, strides, pads, dilations, group)
    if b is not None:  # BiasAdd: a fast per-channel kernel that grappler fuses with Conv2D and Relu
        b = tf.cast(b, y.dtype)
        y = tf.nn.bias_add(y, b) if len(b.shape) == 1 else y + b
    return y if cl else to_first(y, nd)


@importer("Conv", since=22)
def conv(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    """N-D convolution; SAME pads are computed from the static input shape."""
    return conv_values(x, w, b, auto_pad=auto_pad, dilations=dilations, group=group,
                       kernel_shape=kernel_shape, pads=pads, strides=strides)


@conv.channels_last
def conv_nhwc(ctx, x, w, b=None, **attrs):
    """Conv of an NHWC ``x`` (OIHW weights) into NHWC."""
    return conv_values(x, w, b, cl=True, **attrs)


@conv.channels_last(form="hwio")
def conv_nhwc_hwio(ctx, x, w, b=None, **attrs):
    """Ungrouped Conv of an NHWC ``x`` with HWIO weights into NHWC."""
    return conv_values(x, w, b, cl=True, hwio=True, **attrs)


@importer("ConvInteger", since=10)
def conv_integer(ctx, x, w, x_zero_point=None, w_zero_point=None, *, auto_pad, dilations, group,
                 kernel_shape, pads, strides):
    """Integer convolution: (x - x_zero) * (w - w_zero), exact in float64, returned as int32."""
    xi = tf.cast(x, tf.float64)
    wi = tf.cast(w, tf.float64)
    nd = len(wi.shape) - 2
    if x_zero_point is not None:
        xi = xi - tf.reshape(tf.cast(x_zero_point, tf.float64), [])
    if w_zero_point is not None:
        wzp = tf.cast(w_zero_point, tf.float64)
        wi = wi - (tf.reshape(wzp, [-1] + [1] * (nd + 1)) if len(wzp.shape) else wzp)
    y = conv_values(xi, wi, None, auto_pad=auto_pad, dilations=dilations, group=group,
                    kernel_shape=kernel_shape, pads=pads, strides=strides)
    return tf.cast(tf.round(y), tf.int32)
