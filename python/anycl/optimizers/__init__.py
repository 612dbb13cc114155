"""Keras' optimizer classes for compile(): SGD, RMSprop, Adam and AdamW, each with a learning_rate
that is a number or a schedule (anycl.optimizers.schedules):

    model.compile(optimizer=anycl.optimizers.RMSprop(learning_rate=schedules.ExponentialDecay(1e-3, 1000, 0.96)))

They carry what anycl's C API sets: the optimizer and its rate (other hyper-parameters are Keras'
defaults; a value anycl cannot set is refused rather than ignored)."""

import math

from .. import errors
from . import schedules
from .schedules import LearningRateSchedule


class Optimizer:
    """The base class: `name` is the optimizer's name in the C API, `learning_rate` a number or a schedule."""

    name = None
    default_learning_rate = 0.001

    def __init__(self, learning_rate):
        if not isinstance(learning_rate, LearningRateSchedule):
            if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)) or not (
                    math.isfinite(learning_rate) and learning_rate > 0):
                raise errors.InvalidArgumentError(
                    f"{type(self).__name__}: learning_rate must be a positive number or a schedule from "
                    f"anycl.optimizers.schedules, got {learning_rate!r}")
            learning_rate = float(learning_rate)
        self.learning_rate = learning_rate


def _default(value, default, name, who):
    if value != default:
        raise errors.InvalidArgumentError(f"{who}: anycl's {name} is Keras' default {default}; got {value!r} — leave "
                                          f"{name} out")


class SGD(Optimizer):
    """Keras' SGD: momentum 0 (plain SGD) or 0.9 (anycl's momentum), with or without Nesterov."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False):
        super().__init__(learning_rate)
        if momentum not in (0, 0.0, 0.9):
            raise errors.InvalidArgumentError(f"SGD: momentum must be 0 or 0.9 (anycl's), got {momentum!r}")
        if nesterov and momentum == 0:
            raise errors.InvalidArgumentError("SGD: nesterov=True needs momentum=0.9")
        self.momentum, self.nesterov = momentum, bool(nesterov)
        self.name = "nesterov" if self.nesterov else "momentum" if momentum else "sgd"


class RMSprop(Optimizer):
    name = "rmsprop"

    def __init__(self, learning_rate=0.001, rho=0.9, epsilon=1e-7):
        super().__init__(learning_rate)
        _default(rho, 0.9, "rho", "RMSprop")
        _default(epsilon, 1e-7, "epsilon", "RMSprop")


class Adam(Optimizer):
    name = "adam"

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
        super().__init__(learning_rate)
        for value, default, field in ((beta_1, 0.9, "beta_1"), (beta_2, 0.999, "beta_2"), (epsilon, 1e-7, "epsilon")):
            _default(value, default, field, "Adam")


class AdamW(Optimizer):
    name = "adamw"

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
        super().__init__(learning_rate)
        for value, default, field in ((weight_decay, 0.004, "weight_decay"), (beta_1, 0.9, "beta_1"),
                                      (beta_2, 0.999, "beta_2"), (epsilon, 1e-7, "epsilon")):
            _default(value, default, field, "AdamW")


__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "schedules"]
