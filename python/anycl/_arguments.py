"""Argument checks of the Python package (docs/guarantees.md, "Arguments"): integers exact — never
wrapped modulo 2**64 or truncated — paths without NUL, and messages that name the argument as the
caller wrote it."""

import ctypes
import numbers
import os

import numpy as np

from . import errors

_SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1


def _integer(value, name, low=1, high=_SIZE_MAX):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise errors.InvalidArgumentError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if not low <= value <= high:
        raise errors.InvalidArgumentError(
            f"{name} = {value} is outside [{low}, {high}] — pass an integer in that range")
    return value


def _path(path, name):
    encoded = os.fsencode(path)
    if b"\0" in encoded:
        raise errors.InvalidArgumentError(f"{name} {path!r} contains a NUL character, which no file name can hold")
    return encoded


def _device_spec(device):
    """Runtime's device as the C API's spec: None (the default), an index (int) or a spec string."""
    if device is None:
        return None
    if isinstance(device, numbers.Integral) and not isinstance(device, bool):
        return str(_integer(device, "device", low=0)).encode()
    if not isinstance(device, str):
        raise errors.InvalidArgumentError(
            f"device must be an index (0), or a spec string ('0:0', 'gpu', 'cpu', a vendor or part of a name), "
            f"got {device!r}")
    return _path(device, "device")


def _input_shape(input_shape):
    if not isinstance(input_shape, (tuple, list)):
        raise errors.ShapeError(
            f"input_shape must be a tuple — (features,) or (channels, height, width) — got {input_shape!r}; "
            f"for {input_shape!r} features write input_shape=({input_shape!r},)")
    return tuple(_integer(v, f"input_shape[{i}]") for i, v in enumerate(input_shape))


def _fit_arguments(epochs, batch_size, seed, validation_split, validation_data, checkpoint_dir):
    """fit's arguments checked; validation_data wins over validation_split, as in Keras."""
    split = validation_split
    if isinstance(split, bool) or not isinstance(split, numbers.Real) or not 0 <= float(split) < 1:
        raise errors.InvalidArgumentError(
            f"validation_split = {validation_split!r} is outside [0, 1) — pass e.g. 0.1, or 0 for none")
    if validation_data is not None:
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) != 2:
            raise errors.InvalidArgumentError("validation_data must be a pair (x_val, y_val)")
        split = 0.0
    return (_integer(epochs, "epochs"), _integer(batch_size, "batch_size"), _integer(seed, "seed", 0, 2 ** 64 - 1),
            float(split), _path(checkpoint_dir, "checkpoint_dir") if checkpoint_dir else None)


def _finite(x, name):
    """Non-finite features named by their full index (x[2, 3]), before the C API sees them flat."""
    if x.dtype == np.float32 and not np.isfinite(x).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(x))[0])
        raise errors.InvalidArgumentError(
            f"{name}[{', '.join(map(str, bad))}] is {x[bad]} — features must be finite; replace or drop the "
            "non-finite values")
