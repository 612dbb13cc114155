"""Keras' categorical_crossentropy targets: one-hot rows, which anycl trains on as the class labels they
stand for (its softmax cross-entropy takes hard labels)."""

import numpy as np

from . import errors


def labels_from_one_hot(y, classes, what="y"):
    """The class index of each one-hot row of y (samples, classes); a row that is not exactly one 1 and
    zeros elsewhere (soft targets, label smoothing) is refused."""
    y = np.asarray(y)
    if y.ndim == 1 or (y.ndim == 2 and y.shape[1] == 1 and classes != 1):
        raise errors.ShapeError(
            f"categorical_crossentropy takes one-hot targets of shape (samples, {classes}), got {what} of shape "
            f"{y.shape} — convert class labels with anycl.utils.to_categorical({what}, {classes}), or "
            "compile(loss='sparse_categorical_crossentropy') to train on the integer labels")
    if y.ndim != 2 or y.shape[1] != classes:
        raise errors.ShapeError(
            f"{what} has shape {y.shape}; categorical_crossentropy takes one-hot targets of shape (samples, {classes})")
    if not (np.issubdtype(y.dtype, np.number) or y.dtype == np.bool_):
        raise errors.DTypeError(f"one-hot targets must be numbers, got {y.dtype}")
    hard = ((y == 0) | (y == 1)).all(axis=1) & (np.count_nonzero(y, axis=1) == 1)
    if not hard.all():
        bad = int(np.argmin(hard))
        raise errors.InvalidArgumentError(
            f"{what}[{bad}] = {np.array2string(y[bad], threshold=12)} is not one-hot (exactly one 1, the rest 0): "
            "anycl's categorical_crossentropy takes hard labels only (no label smoothing or soft targets) — pass "
            "one-hot rows, or integer labels with compile(loss='sparse_categorical_crossentropy')")
    return np.argmax(y, axis=1).astype(np.int32)
