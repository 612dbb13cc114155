"""Layers as objects, for a Keras-shaped model: each stands for one token of anycl's `--layers`
grammar (docs/model-format.md), so a model of objects and one of the string are the same model."""

from . import errors


class Layer:
    token = None  # the --layers token; None for the output layer
    input_shape = None  # Keras 2's input_shape= on the first layer: the model's input shape
    data_format = None  # Keras' data_format= of an image layer; None: the model's


def _data_format(layer, data_format):
    """Keras' data_format= of an image layer. anycl holds one data format per model (Sequential's
    data_format=): the layers that name one must agree with each other and with it."""
    if data_format not in (None, "channels_first", "channels_last"):
        raise errors.InvalidArgumentError(
            f"{layer}: data_format must be 'channels_first', 'channels_last' or None, got {data_format!r}")
    return data_format


def _keras_input_shape(layer, input_shape):
    """Keras 2's `input_shape=` keyword of a layer, as a tuple (checked when the model is built)."""
    if input_shape is not None and not isinstance(input_shape, (tuple, list)):
        raise errors.InvalidArgumentError(
            f"{layer}: input_shape must be a tuple — (features,) or (channels, height, width) — got "
            f"{input_shape!r}; for {input_shape!r} features write input_shape=({input_shape!r},)")
    return None if input_shape is None else tuple(input_shape)


class InputLayer(Layer):
    """Keras' InputLayer: the first element of a Sequential, giving the input shape without the batch
    axis — `shape=` (Keras 3) or `input_shape=` (Keras 2): (features,) or (channels, height, width)
    (Keras' (height, width, channels) with data_format="channels_last")."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, shape=None, name=None):
        if (shape is None) == (input_shape is None):
            raise errors.InvalidArgumentError(
                "InputLayer: pass the input shape once, as shape=(features,) or shape=(channels, height, width)")
        if dtype not in (None, "float32"):
            raise errors.InvalidArgumentError(f"InputLayer: anycl's inputs are float32, got dtype={dtype!r}")
        self.input_shape = _keras_input_shape("InputLayer", shape if shape is not None else input_shape)
        self.batch_size, self.name = batch_size, name


def Input(shape=None, batch_size=None, dtype=None, name=None):
    """Keras' Input(shape=...) as the first element of a Sequential (or model.add(Input(...))): the
    input shape without the batch axis."""
    if shape is None:
        raise errors.InvalidArgumentError("Input: pass shape=(features,) or shape=(channels, height, width)")
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name)


ACTIVATIONS = ("relu", "tanh", "sigmoid", "leaky_relu", "elu", "gelu", "linear")  # Keras' names and defaults


def _activation(layer, activation):
    """The --layers suffix for Keras' activation= (None: none, so the token takes the model's
    activation; to_layer_string makes a hidden Dense or Conv2D that names none linear, as Keras)."""
    if activation is None:
        return ""
    if activation not in ACTIVATIONS:
        raise errors.InvalidArgumentError(
            f"{layer}: activation must be one of {', '.join(ACTIVATIONS)} (or None), got {activation!r}")
    return ":" + activation


def _square(layer, argument, value):
    """One positive int from Keras' `n` or `(n, n)`; anycl's convolutions and pools are square, so
    `(3, 5)` is refused rather than silently taken as 3x3."""
    sides = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(sides) not in (1, 2) or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in sides):
        raise errors.InvalidArgumentError(
            f"{layer}: {argument} must be a positive integer or a pair of them, got {value!r}")
    if len(set(sides)) != 1:
        raise errors.InvalidArgumentError(
            f"{layer}: {argument}={value!r} is not square — anycl's {layer} takes square windows only "
            f"(e.g. {argument}={sides[0]} or ({sides[0]}, {sides[0]}))")
    return sides[0]


class Dense(Layer):
    """A fully connected layer with `units` outputs. The last Dense of a model is its output layer
    (linear; the softmax is in the loss). A hidden one takes its own `activation` (relu, tanh,
    sigmoid, leaky_relu with Keras' slope 0.2, elu, gelu in its exact erf form, linear); None (the
    default) is linear, as in Keras: `Dense(512, activation="relu")` is mnist_mlp's hidden layer."""

    def __init__(self, units, activation=None, input_shape=None, input_dim=None):
        if input_dim is not None:  # Keras 2's Dense(512, input_dim=784)
            if input_shape is not None:
                raise errors.InvalidArgumentError("Dense: pass input_shape= or input_dim=, not both")
            input_shape = (input_dim,)
        self.input_shape = _keras_input_shape("Dense", input_shape)
        if int(units) < 1:
            raise errors.InvalidArgumentError(f"Dense: units must be at least 1, got {units}")
        self.units = int(units)
        self.activation = activation
        self.token = str(self.units) + ("" if activation in (None, "softmax") else _activation("Dense", activation))


class Dropout(Layer):
    def __init__(self, rate, input_shape=None):
        self.input_shape = _keras_input_shape("Dropout", input_shape)
        if not 0 <= float(rate) < 1:
            raise errors.InvalidArgumentError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.token = f"dropout{float(rate):g}"


class Conv2D(Layer):
    """filters × kernel_size² convolution (valid padding unless padding='same'); `activation` as
    Dense's (None: linear, as in Keras)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, activation=None,
                 input_shape=None):
        self.input_shape = _keras_input_shape("Conv2D", input_shape)
        self.data_format = _data_format("Conv2D", data_format)
        if padding not in ("valid", "same"):
            raise errors.InvalidArgumentError(f"Conv2D: padding must be 'valid' or 'same', got {padding!r}")
        if isinstance(filters, bool) or not isinstance(filters, int) or filters < 1:
            raise errors.InvalidArgumentError(f"Conv2D: filters must be a positive integer, got {filters!r}")
        k = _square("Conv2D", "kernel_size", kernel_size)
        s = _square("Conv2D", "strides", strides)
        self.token = f"conv{filters}x{k}" + (f"s{s}" if s != 1 else "") + ("same" if padding == "same" else "")
        self.token += _activation("Conv2D", activation)


class MaxPool2D(Layer):
    """The maximum of each pool_size² window (valid padding), moved by `strides` (None: pool_size, as Keras)."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, input_shape=None):
        self.input_shape = _keras_input_shape("MaxPool2D", input_shape)
        self.data_format = _data_format("MaxPool2D", data_format)
        if padding != "valid":
            raise errors.InvalidArgumentError(
                f"MaxPool2D: anycl's pooling has valid padding only, got padding={padding!r}")
        size = _square("MaxPool2D", "pool_size", pool_size)
        stride = size if strides is None else _square("MaxPool2D", "strides", strides)
        self.token = f"pool{size}" + (f"s{stride}" if stride != size else "")


class AveragePooling2D(Layer):
    """The mean of each pool_size² window (valid padding), moved by `strides` (None: pool_size, as Keras)."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, input_shape=None):
        if padding != "valid":
            raise errors.InvalidArgumentError(
                f"AveragePooling2D: anycl's pooling has valid padding only, got padding={padding!r}")
        self.input_shape = _keras_input_shape("AveragePooling2D", input_shape)
        self.data_format = _data_format("AveragePooling2D", data_format)
        size = _square("AveragePooling2D", "pool_size", pool_size)
        stride = size if strides is None else _square("AveragePooling2D", "strides", strides)
        self.token = f"avgpool{size}" + (f"s{stride}" if stride != size else "")


class GlobalAveragePooling2D(Layer):
    """The mean of each channel's whole plane: (C, H, W) → (C,), no Flatten needed after it."""
    token = "globalavgpool"

    def __init__(self, data_format=None):
        self.data_format = _data_format(type(self).__name__, data_format)


class GlobalMaxPooling2D(Layer):
    """The maximum of each channel's whole plane: (C, H, W) → (C,)."""
    token = "globalmaxpool"

    def __init__(self, data_format=None):
        self.data_format = _data_format(type(self).__name__, data_format)


# Keras' short aliases
MaxPooling2D = MaxPool2D
AvgPool2D = AveragePooling2D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D


class Flatten(Layer):
    token = "flatten"

    def __init__(self, data_format=None, input_shape=None):
        self.input_shape = _keras_input_shape("Flatten", input_shape)
        self.data_format = _data_format("Flatten", data_format)


class Activation(Layer):
    """Keras' Activation(name) layer. anycl fuses an activation into the layer before it, so this one
    joins the Dense, Conv2D or BatchNormalization right before it, which must name no activation of its
    own (as in Keras, where that layer is then linear): `Dense(64), Activation("gelu")` is
    `Dense(64, activation="gelu")`; after a BatchNormalization it is applied in the normalisation
    (`Conv2D(32, 3), BatchNormalization(), ReLU()`, with that Conv2D linear as in Keras)."""

    def __init__(self, activation):
        if activation not in ACTIVATIONS + ("softmax",):
            raise errors.InvalidArgumentError(
                f"Activation: must be one of {', '.join(ACTIVATIONS)} or softmax (output), got {activation!r}")
        self.activation = activation


class ReLU(Activation):
    def __init__(self):
        super().__init__("relu")


class LeakyReLU(Activation):
    """Keras' LeakyReLU with its default slope 0.2 (Keras 3's `negative_slope`, Keras 2's `alpha`);
    anycl's leaky_relu has that slope only."""

    def __init__(self, negative_slope=0.2, alpha=None):
        slope = negative_slope if alpha is None else alpha
        if float(slope) != 0.2:
            raise errors.InvalidArgumentError(
                f"LeakyReLU: anycl's leaky_relu has Keras' default slope 0.2, got {slope!r}")
        super().__init__("leaky_relu")


class ELU(Activation):
    """Keras' ELU with its default alpha 1 (the only one anycl has)."""

    def __init__(self, alpha=1.0):
        if float(alpha) != 1.0:
            raise errors.InvalidArgumentError(f"ELU: anycl's elu has Keras' default alpha 1.0, got {alpha!r}")
        super().__init__("elu")


def _linear(layer):
    """A Dense or Conv2D that names no activation as Keras reads it (linear); any other layer as is."""
    if isinstance(layer, Dense) and layer.activation is None:
        return Dense(layer.units, "linear")
    if isinstance(layer, Conv2D) and ":" not in layer.token:
        linear = Conv2D.__new__(Conv2D)
        linear.token = layer.token + ":linear"
        return linear
    return layer


def fuse_activations(layers):
    """The layers with each Activation layer joined to the Dense, Conv2D or BatchNormalization before
    it. Keras' block `Conv2D(32, 3), BatchNormalization(), ReLU()` becomes a linear Conv2D (Keras'
    default, which the ReLU after the normalisation says the script means) and a BatchNormalization
    with the ReLU fused into it."""
    out = []
    for l in layers:
        if not isinstance(l, Activation):
            out.append(l)
            continue
        before = out[-1] if out else None
        if isinstance(before, BatchNormalization) and ":" not in before.token and l.activation != "softmax":
            fused = BatchNormalization.__new__(BatchNormalization)
            fused.__dict__.update(before.__dict__)
            fused.token = before.token + _activation("BatchNormalization", l.activation)
            out[-1] = fused
            if len(out) > 1:
                out[-2] = _linear(out[-2])
        elif isinstance(before, Dense) and before.activation in (None, "linear"):
            out[-1] = Dense(before.units, l.activation)
        elif isinstance(before, Conv2D) and ":" not in before.token and l.activation != "softmax":
            fused = Conv2D.__new__(Conv2D)
            fused.token = before.token + _activation("Conv2D", l.activation)
            out[-1] = fused
        else:
            raise errors.InvalidArgumentError(
                f"{type(l).__name__}({l.activation!r}) must follow a Dense, Conv2D or BatchNormalization that names "
                "no activation of its own: anycl applies activations in that layer's bias or normalisation pass")
    return out


class BatchNormalization(Layer):
    """Keras' BatchNormalization: per feature after Dense, per channel after Conv2D (anycl's images are
    channels-first, so the channel axis is 1; axis=-1, Keras' default, is read as that same channel
    axis, which is what Keras' channels_last means by it). Training normalises with the batch's mean
    and biased variance and updates moving = moving·momentum + batch·(1 − momentum); evaluate and
    predict use the moving statistics. get_weights() gives gamma, beta, moving_mean, moving_variance.
    An Activation/ReLU/LeakyReLU/ELU right after it is applied in its normalisation pass (Keras'
    `Conv2D(32, 3), BatchNormalization(), ReLU()`; see fuse_activations)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, input_shape=None):
        self.input_shape = _keras_input_shape("BatchNormalization", input_shape)
        if axis not in (-1, 1):
            raise errors.InvalidArgumentError(
                f"BatchNormalization: axis must be -1 or 1 (the feature or channel axis), got {axis!r}")
        if isinstance(momentum, bool) or not 0 <= float(momentum) <= 1:
            raise errors.InvalidArgumentError(f"BatchNormalization: momentum must be in [0, 1], got {momentum!r}")
        if isinstance(epsilon, bool) or not float(epsilon) > 0:
            raise errors.InvalidArgumentError(f"BatchNormalization: epsilon must be positive, got {epsilon!r}")
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        default = self.momentum == 0.99 and self.epsilon == 0.001
        self.token = "bn" if default else f"bn{self.momentum!r}_{self.epsilon!r}"


def to_layer_string(layers):
    """(the --layers text of every layer but the last, the last Dense's units, the default activation
    of hidden layers that name none). A hidden Dense or Conv2D that names no activation is linear, as
    Keras reads `Dense(64)` (the --layers text's own default, the model's activation, does not apply to
    layer objects)."""
    layers = fuse_activations(layers)
    if not layers or not isinstance(layers[-1], Dense):
        raise errors.InvalidArgumentError("a model's last layer must be the Dense output layer (e.g. Dense(10))")
    if layers[-1].activation not in (None, "linear", "softmax", "sigmoid"):
        raise errors.InvalidArgumentError(
            "the output Dense is linear (the softmax is in the loss; a sigmoid output is in the "
            "binary_crossentropy loss): leave its activation out, or say 'softmax' or 'sigmoid'")
    for l in layers[:-1]:
        if isinstance(l, Dense) and l.activation == "softmax":
            raise errors.InvalidArgumentError(
                "only the output Dense may say activation='softmax' (it is in the loss); hidden layers take "
                + ", ".join(ACTIVATIONS))
    hidden = ",".join(_linear(l).token for l in layers[:-1]) or "none"
    return hidden, layers[-1].units, "relu"
