"""Running Python callbacks inside the C library's training loop: an exception a callback raises
cannot cross ctypes (it would be printed and ignored), so it is kept, training stops after the
current step (the model keeps the weights reached), and fit() raises it, as Keras does."""


class CallbackGuard:
    def __init__(self):
        self.error = None

    def wrap(self, function):
        """`function` as a C callback: its exception is kept and turned into a stop (1)."""

        def guarded(*args):
            if self.error is not None:
                return 1
            try:
                return function(*args)
            except BaseException as e:  # noqa: B036 — every exception, SystemExit included, goes to fit()
                self.error = e
                return 1

        return guarded

    def reraise(self):
        """Raises the kept exception, if any (call after the training call returned)."""
        if self.error is not None:
            error, self.error = self.error, None
            raise error
