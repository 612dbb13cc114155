"""Keras' learning-rate schedules (keras.optimizers.schedules), passed as an optimizer's
learning_rate: `anycl.optimizers.RMSprop(learning_rate=ExponentialDecay(1e-3, 1000, 0.96))`. The
library applies them per training step, as Keras does (the step count restarts at each fit());
calling a schedule with a step gives its rate there, computed as the library computes it."""

import math

from .. import errors


def _finite(value, name, who):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise errors.InvalidArgumentError(f"{who}: {name} must be a finite number, got {value!r}")
    return float(value)


class LearningRateSchedule:
    """The base class: a schedule maps the step count (optimizer iterations, from 0) to a rate."""

    kind = None

    def __call__(self, step):
        raise NotImplementedError

    def _initial(self):
        """The learning rate the optimizer starts from (0: the optimizer's default)."""
        return 0.0

    def _fill(self, options):
        """Sets the schedule's fields of the C API's anycl_train_options; returns what the fields point
        to, to be kept alive for the call."""
        options.lr_schedule = self.kind.encode()
        return None


class ExponentialDecay(LearningRateSchedule):
    """initial_learning_rate * decay_rate ** (step / decay_steps); with staircase=True the exponent is
    floored (the rate drops every decay_steps steps)."""

    kind = "exponential"

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        who = "ExponentialDecay"
        self.initial_learning_rate = _finite(initial_learning_rate, "initial_learning_rate", who)
        self.decay_steps = _finite(decay_steps, "decay_steps", who)
        self.decay_rate = _finite(decay_rate, "decay_rate", who)
        self.staircase = bool(staircase)
        self.name = name

    def __call__(self, step):
        p = step / self.decay_steps
        return self.initial_learning_rate * self.decay_rate ** (math.floor(p) if self.staircase else p)

    def _initial(self):
        return self.initial_learning_rate

    def _fill(self, options):
        super()._fill(options)
        options.decay_steps, options.decay_rate, options.staircase = self.decay_steps, self.decay_rate, self.staircase
        return None

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] while step <= boundaries[0], values[1] while step <= boundaries[1], ..., values[-1]
    after the last boundary (step decay). `values` are the rates: len(boundaries) + 1 of them."""

    kind = "step"

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        who = "PiecewiseConstantDecay"
        boundaries, values = list(boundaries), list(values)
        for b in boundaries:
            if isinstance(b, bool) or not isinstance(b, int) or b < 0:
                raise errors.InvalidArgumentError(f"{who}: boundaries must be step counts (integers >= 0), got {b!r}")
        if len(values) != len(boundaries) + 1:
            raise errors.InvalidArgumentError(
                f"{who}: {len(values)} values for {len(boundaries)} boundaries — pass one value more than boundaries")
        self.boundaries = boundaries
        self.values = [_finite(v, "values", who) for v in values]
        self.name = name

    def __call__(self, step):
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return value
        return self.values[-1]

    def _fill(self, options):
        import ctypes

        super()._fill(options)
        boundaries = (ctypes.c_uint64 * len(self.boundaries))(*self.boundaries)
        values = (ctypes.c_float * len(self.values))(*self.values)
        options.boundaries, options.values = boundaries, values
        options.boundary_count = len(self.boundaries)
        return boundaries, values

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps))
    + alpha). Keras' linear warm-up (warmup_target, warmup_steps) is not offered."""

    kind = "cosine"

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        who = "CosineDecay"
        if warmup_target is not None or warmup_steps:
            raise errors.InvalidArgumentError(
                f"{who}: warmup_target and warmup_steps are not supported by anycl — leave them out (no warm-up)")
        self.initial_learning_rate = _finite(initial_learning_rate, "initial_learning_rate", who)
        self.decay_steps = _finite(decay_steps, "decay_steps", who)
        self.alpha = _finite(alpha, "alpha", who)
        self.name = name

    def __call__(self, step):
        fraction = min(step, self.decay_steps) / self.decay_steps
        return self.initial_learning_rate * ((1 - self.alpha) * 0.5 * (1 + math.cos(math.pi * fraction)) + self.alpha)

    def _initial(self):
        return self.initial_learning_rate

    def _fill(self, options):
        super()._fill(options)
        options.decay_steps, options.alpha = self.decay_steps, self.alpha
        return None

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name}


__all__ = ["CosineDecay", "ExponentialDecay", "LearningRateSchedule", "PiecewiseConstantDecay"]
