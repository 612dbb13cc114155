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

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        """The schedule get_config() described (Keras' from_config: the config as keyword arguments)."""
        return cls(**config)

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
    + alpha). With warmup_target (Keras' linear warm-up) the rate first rises linearly from
    initial_learning_rate to warmup_target over warmup_steps steps, then decays as above from
    warmup_target, its step counted from the warm-up's end, to alpha * warmup_target. Without
    warmup_target, warmup_steps is ignored, as in Keras."""

    kind = "cosine"
    warmup_target, warmup_steps = None, 0  # what a CosineDecay pickled before the warm-up existed holds

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        who = "CosineDecay"
        self.initial_learning_rate = _finite(initial_learning_rate, "initial_learning_rate", who)
        self.decay_steps = _finite(decay_steps, "decay_steps", who)
        self.alpha = _finite(alpha, "alpha", who)
        self.name = name
        if warmup_target is not None:
            warmup_target = _finite(warmup_target, "warmup_target", who)
            if warmup_target <= 0:
                raise errors.InvalidArgumentError(
                    f"{who}: warmup_target is {warmup_target}, but a warm-up must rise to a rate > 0 — pass e.g. "
                    f"warmup_target=0.01, or None for no warm-up")
        steps = _finite(warmup_steps, "warmup_steps", who)
        if steps < 0 or steps != int(steps):
            raise errors.InvalidArgumentError(
                f"{who}: warmup_steps is {warmup_steps!r} — pass a whole number of steps >= 0 (e.g. 500)")
        self.warmup_target = warmup_target
        self.warmup_steps = int(steps)

    def _decayed(self, start, step):
        fraction = min(step, self.decay_steps) / self.decay_steps
        return start * ((1 - self.alpha) * 0.5 * (1 + math.cos(math.pi * fraction)) + self.alpha)

    def __call__(self, step):
        if self.warmup_target is None:
            return self._decayed(self.initial_learning_rate, step)
        if step < self.warmup_steps:
            rise = self.warmup_target - self.initial_learning_rate
            return rise * (step / self.warmup_steps) + self.initial_learning_rate
        return self._decayed(self.warmup_target, step - self.warmup_steps)

    def _initial(self):
        return self.initial_learning_rate

    def _fill(self, options):
        super()._fill(options)
        options.decay_steps, options.alpha = self.decay_steps, self.alpha
        if self.warmup_target is not None:  # None: Keras ignores warmup_steps
            options.warmup_target, options.warmup_steps = self.warmup_target, self.warmup_steps
        return None

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


__all__ = ["CosineDecay", "ExponentialDecay", "LearningRateSchedule", "PiecewiseConstantDecay"]
