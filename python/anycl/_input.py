"""Where a Sequential's input shape comes from, as a Keras script gives it: Sequential(input_shape=...),
Keras 2's `input_shape=` on the first layer, or an Input / InputLayer as the first element; and the
check that keeps a channels-last image shape from training as channels first."""

from . import errors
from ._arguments import _input_shape
from .layers import InputLayer, Layer

DATA_FORMATS = ("channels_first", "channels_last")


def split_input_layer(layers):
    """(the layers without a leading InputLayer, the input shape the layers give or None)."""
    for i, l in enumerate(layers):
        if not isinstance(l, Layer):
            raise errors.InvalidArgumentError(
                f"layer {i} is {l!r}, not an anycl layer — use the classes of anycl.layers (Dense, Conv2D, ...)")
    given = None
    if layers and isinstance(layers[0], InputLayer):
        given, layers = layers[0].input_shape, layers[1:]
        if layers and layers[0].input_shape not in (None, given):
            raise errors.ShapeError(
                f"two input shapes: the Input says {given} and the first layer says input_shape="
                f"{layers[0].input_shape} — give it once")
    elif layers:
        given = layers[0].input_shape
    for position, l in enumerate(layers):
        if isinstance(l, InputLayer):
            raise errors.InvalidArgumentError(
                "an Input / InputLayer must be the model's first element (it gives the input shape)")
        if position > 0 and l.input_shape is not None:
            raise errors.InvalidArgumentError(
                f"{type(l).__name__}(input_shape={l.input_shape}) is not the first layer: only the first layer (or "
                "an Input before it) gives the model's input shape — remove input_shape= from this one")
    return list(layers), given


def model_data_format(argument, layers):
    """Sequential's data_format= (`argument`), else the one the image layers name (Keras' Conv2D(...,
    data_format="channels_last")), else None. anycl holds one per model: disagreeing ones are refused."""
    named = {l.data_format for l in layers if l.data_format is not None}
    if len(named) > 1:
        raise errors.InvalidArgumentError(
            "the layers name both data formats; anycl's model holds one (its images are converted on the way "
            "in) — give every image layer the same data_format=, or pass it once to Sequential(data_format=...)")
    if named and argument is not None and named != {argument}:
        raise errors.InvalidArgumentError(
            f"Sequential(data_format={argument!r}) but the layers say data_format={named.pop()!r} — give one")
    return argument if argument is not None else (named.pop() if named else None)


def looks_channels_last(shape):
    """An image shape such as (28, 28, 1) or (32, 32, 3): Keras' (height, width, channels) order."""
    return len(shape) == 3 and shape[2] in (1, 3) and shape[0] >= 8 and shape[1] >= 8


def model_input_shape(argument, from_layers, data_format):
    """The input shape in anycl's order ((features,) or (C, H, W)) and the data format, from
    Sequential's input_shape= (`argument`), the one the layers give, and Sequential's data_format=
    (None: channels_first, refusing an image shape that looks channels-last)."""
    if argument is not None and from_layers is not None and tuple(argument) != tuple(from_layers):
        raise errors.ShapeError(
            f"two input shapes: Sequential(input_shape={tuple(argument)}) and {tuple(from_layers)} from the first "
            "layer (its input_shape= or an Input) — give it once")
    shape = argument if argument is not None else from_layers
    if shape is None:
        raise errors.InvalidArgumentError(
            "pass input_shape=(features,) or (channels, height, width) — to Sequential, to the first layer "
            "(Dense(512, input_shape=(784,))), or as an Input(shape=...) first")
    checked = _input_shape(shape)
    if len(checked) not in (1, 3):
        raise errors.ShapeError(f"input_shape must be (features,) or (channels, height, width), got {shape}")
    if data_format is not None and data_format not in DATA_FORMATS:
        raise errors.InvalidArgumentError(
            f"data_format must be 'channels_first' or 'channels_last', got {data_format!r}")
    if data_format is None and looks_channels_last(checked):
        h, w, c = checked
        raise errors.ShapeError(
            f"input_shape={checked} looks like Keras' channels-last image (height, width, channels), but anycl's "
            f"images are channels first — pass input_shape=({c}, {h}, {w}) with (samples, {c}, {h}, {w}) arrays, "
            "or Sequential(..., data_format='channels_last') to keep Keras' order (data_format='channels_first' "
            "says the shape is channels first as written)")
    data_format = data_format or "channels_first"
    if data_format == "channels_last" and len(checked) == 3:
        h, w, c = checked  # Keras' order for channels-last images; anycl computes in (C, H, W)
        checked = (c, h, w)
    return checked, data_format
