"""fit()'s console output as Keras prints it: verbose=1 a progress bar per epoch (redrawn in place on a
terminal, one final line per epoch otherwise), verbose=2 one line per epoch, verbose=0 nothing."""

import sys

from . import errors

_WIDTH = 30  # the bar's characters, as Keras'


def verbosity(verbose):
    """Keras' verbose argument as 0, 1 or 2 ("auto": 1, as Keras' default for fit)."""
    if verbose == "auto":
        return 1
    if isinstance(verbose, bool):
        return int(verbose)
    if isinstance(verbose, int) and verbose in (0, 1, 2):
        return verbose
    raise errors.InvalidArgumentError(f"fit: verbose must be 0 (silent), 1 (progress bar), 2 (one line per epoch) or "
                                      f"'auto', got {verbose!r}")


def _duration(seconds):
    return f"{seconds:.0f}s" if seconds >= 1 or seconds == 0 else f"{seconds * 1000:.0f}ms"


def _per_step(seconds, steps):
    per = seconds / max(steps, 1)
    return f"{per:.0f}s/step" if per >= 1 else f"{per * 1e3:.0f}ms/step" if per >= 1e-3 else f"{per * 1e6:.0f}us/step"


def _figures(logs):
    return "".join(f" - {k}: {v:.4f}" for k, v in logs.items())


class ProgressBar:
    """Receives fit()'s progress and epoch figures and prints them (to sys.stdout, as Keras does)."""

    def __init__(self, verbose, epochs, stream=None):
        self.verbose, self.epochs = verbose, epochs
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.dynamic = bool(isatty and isatty())  # redraw in place only where a terminal shows it
        self.header_for = None  # the epoch whose "Epoch e/E" line was printed
        self.steps, self.step_seconds, self.width = 0, 0.0, 0

    def _write(self, text):
        self.stream.write(text)
        self.stream.flush()

    def _header(self, epoch):
        if self.header_for != epoch:
            self.header_for = epoch
            self._write(f"Epoch {epoch}/{self.epochs}\n")

    def _bar(self, step, steps):
        digits = len(str(steps))
        done = int(_WIDTH * step / max(steps, 1))
        bar = "=" * done + (">" if step < steps else "") + "." * (_WIDTH - done - (1 if step < steps else 0))
        return f"{step:{digits}d}/{steps} [{bar[:_WIDTH]}]"

    def progress(self, epoch, step, steps, seconds, logs):
        if not self.verbose:
            return
        self._header(epoch)
        self.steps, self.step_seconds = steps, seconds
        if self.verbose == 1 and self.dynamic and step < steps:
            eta = seconds / max(step, 1) * (steps - step)
            line = f"{self._bar(step, steps)} - ETA: {_duration(eta)}{_figures(logs)}"
            self._write("\r" + line + " " * max(self.width - len(line), 0))
            self.width = len(line)

    def epoch_end(self, epoch, seconds, logs, steps):
        if not self.verbose:
            return
        self._header(epoch)
        steps = self.steps or steps
        timing = f"{_duration(seconds)} {_per_step(self.step_seconds or seconds, steps)}"
        if self.verbose == 1:
            line = f"{self._bar(steps, steps)} - {timing}{_figures(logs)}"
            pad = " " * max(self.width - len(line), 0) if self.dynamic else ""
            self._write(("\r" if self.dynamic else "") + line + pad + "\n")
        else:
            self._write(f"{steps}/{steps} - {timing}{_figures(logs)}\n")
        self.steps, self.step_seconds, self.width = 0, 0.0, 0
