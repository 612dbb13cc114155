"""What keeps the Python package safe under threads, processes and signals (docs/guarantees.md):
handles released only by the process that made them, model copies through the model file's bytes,
library calls counted so that interpreter exit waits for them, predictions in chunks that let
Ctrl-C through, and fit's SIGINT handler that chains an application's own."""

import atexit
import contextlib
import ctypes
import os
import signal
import tempfile
import threading

from . import errors
from ._lib import check, lib


def _made_here(obj):
    """Whether obj's handle was made in this process: a child forked from the process that made it
    must not release it (the driver's threads stayed in the parent; releasing could hang)."""
    return getattr(obj, "_pid", None) == os.getpid()


def _model_file_bytes(h):
    with tempfile.TemporaryDirectory(prefix="anycl-copy-") as folder:
        path = os.path.join(folder, "model.anycl")
        check(lib.anycl_model_save(h, os.fsencode(path)))
        with open(path, "rb") as f:
            return f.read()


def _handle_from_model_file(data):
    with tempfile.TemporaryDirectory(prefix="anycl-copy-") as folder:
        path = os.path.join(folder, "model.anycl")
        with open(path, "wb") as f:
            f.write(data)
        h = ctypes.c_void_p()
        check(lib.anycl_model_load(os.fsencode(path), ctypes.byref(h)))
        return h


_PREDICT_CHUNK = 16384  # rows per C call: a multiple of the device batch (256), so results are unchanged


def _predict_in_chunks(h, rt, x, out):
    """anycl_predict over row chunks, so that Python runs a Ctrl-C handler between them (a signal
    handler runs only between C calls) instead of after all rows."""
    for first in range(0, x.shape[0], _PREDICT_CHUNK):
        rows = min(_PREDICT_CHUNK, x.shape[0] - first)
        with _in_flight.call():
            check(lib.anycl_predict(h, rt._h, x[first:].ctypes.data, rows, out[first:].ctypes.data,
                                    rows * out.shape[1]))


class _InFlight:
    """The library calls running in any thread, so that interpreter exit waits for them: a daemon
    thread still inside the library while the process tears the library down would crash it.
    At exit, fits are asked to stop after their current step, and new calls are refused."""

    def __init__(self):
        self._cv = threading.Condition()
        self._count, self._stops, self._closing = 0, {}, False

    @contextlib.contextmanager
    def call(self, stop=None):
        with self._cv:
            if self._closing:
                raise errors.Error("anycl: the interpreter is exiting — no new calls (join the threads that use "
                                   "anycl before the main thread returns)")
            self._count += 1
            token = object()
            if stop is not None:
                self._stops[token] = stop
        try:
            yield
        finally:
            with self._cv:
                self._count -= 1
                self._stops.pop(token, None)
                self._cv.notify_all()

    def close(self, timeout=60.0):
        with self._cv:
            self._closing = True
            for stop in self._stops.values():
                stop()
            self._cv.wait_for(lambda: self._count == 0, timeout)


_in_flight = _InFlight()
atexit.register(_in_flight.close)
if hasattr(os, "register_at_fork"):  # a forked child inherits the count of calls other threads had running
    os.register_at_fork(after_in_child=_in_flight.__init__)


def _sigint_during_fit(interrupted, previous):
    """fit's SIGINT handler. With Python's default handler, Ctrl-C stops training after the current
    step and fit raises KeyboardInterrupt; an application's own handler is called instead and decides
    (it can set model.stop_training); an ignored SIGINT stays ignored."""
    def handler(signum, frame):
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            interrupted.append(True)
    return handler
