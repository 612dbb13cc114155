"""Keras' utilities a training script uses: to_categorical."""

import numpy as np

from . import errors


def to_categorical(x, num_classes=None, dtype="float32"):
    """Keras' to_categorical: integer class labels (samples,) as one-hot rows (samples, num_classes),
    float32 (None: max label + 1 classes). A trailing axis of 1, (samples, 1), is dropped as Keras does."""
    y = np.asarray(x)
    if y.dtype.kind == "f" and y.size and not np.array_equal(y, np.round(y)):
        raise errors.InvalidArgumentError("to_categorical: labels must be whole numbers (class indices)")
    if not (np.issubdtype(y.dtype, np.integer) or y.dtype.kind == "f" or y.dtype == np.bool_):
        raise errors.DTypeError(f"to_categorical: labels must be integers, got {y.dtype}")
    y = y.astype(np.int64)
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    if y.size and y.min() < 0:
        raise errors.InvalidArgumentError(f"to_categorical: labels must be 0 or more, got {int(y.min())}")
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    elif isinstance(num_classes, bool) or int(num_classes) != num_classes or num_classes < 1:
        raise errors.InvalidArgumentError(
            f"to_categorical: num_classes must be a positive integer, got {num_classes!r}")
    num_classes = int(num_classes)
    if y.size and y.max() >= num_classes:
        raise errors.InvalidArgumentError(
            f"to_categorical: label {int(y.max())} is not in [0, {num_classes}) — pass num_classes={int(y.max()) + 1} "
            "or more")
    out = np.zeros(y.shape + (num_classes,), dtype=dtype)
    np.put_along_axis(out, y[..., None], 1, axis=-1)
    return out


__all__ = ["to_categorical"]
