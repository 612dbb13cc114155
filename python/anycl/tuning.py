"""Tuning CLBlast's GEMM for a device, as `anycl tune` does: anycl.tune(model), and the first-use
tuning that Sequential.fit runs on a CPU with no tuning yet (C API: anycl_tune).

    import anycl
    result = anycl.tune(model, batch_size=128)       # minutes on a CPU; stored for the device
    result = anycl.tune(model, quick=True)           # the shortlists only (about 95 s on 2 cores)
    anycl.tune(model, progress=lambda p: p.candidates < 10)   # return False to stop, keeping the best

Each candidate compiles and runs in a child process of anycl's worker program (anycl-tune-worker,
shipped beside the library), so a driver crash costs one candidate. The result is stored in the
device's tuning file in anycl's cache folder, where every later start on that device (the
`anycl` command's included) applies it.
"""

import ctypes
import sys
from dataclasses import dataclass

from . import errors
from ._callbacks import CallbackGuard
from ._lib import check, lib, text


class _TuneProgress(ctypes.Structure):
    _fields_ = [
        ("line", ctypes.c_char_p),
        ("stage", ctypes.c_char_p),
        ("candidates", ctypes.c_size_t),
        ("best_seconds", ctypes.c_double),
        ("seconds", ctypes.c_double),
    ]


_TUNE_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_TuneProgress), ctypes.c_void_p)


class _TuneOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("quick", ctypes.c_int),
        ("first_use", ctypes.c_int),
        ("minutes", ctypes.c_double),
        ("batch", ctypes.c_size_t),
        ("on_progress", _TUNE_CALLBACK),
        ("user", ctypes.c_void_p),
    ]


class _TuneResult(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("tuned", ctypes.c_int),
        ("stopped", ctypes.c_int),
        ("candidates", ctypes.c_size_t),
        ("seconds", ctypes.c_double),
        ("ms_before", ctypes.c_double),
        ("ms_after", ctypes.c_double),
        # API version 5:
        ("kept_entry", ctypes.c_int),
        ("against", ctypes.c_char * 512),
    ]


_P = ctypes.POINTER
_sizes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_size_t)]
for _name, _restype, _argtypes in [
    ("anycl_tune_options_init", None, [_P(_TuneOptions)]),
    ("anycl_tune_result_init", None, [_P(_TuneResult)]),
    ("anycl_tune", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, _P(_TuneOptions), _P(_TuneResult)]),
    ("anycl_first_use_tuning_skipped", ctypes.c_int, _sizes),
    ("anycl_tuning_file_path", ctypes.c_int, _sizes),
]:
    getattr(lib, _name).restype = _restype
    getattr(lib, _name).argtypes = _argtypes


@dataclass
class TuneProgress:
    """What a tuning's progress callback sees with each line."""
    line: str            # what the tuner says
    stage: str           # "XgemmDirect", "Xgemm", "GemmRoutine"; "" before the first stage
    candidates: int      # parameter sets measured so far
    best_seconds: float  # the stage's best exact set so far (one pass over the model's GEMMs); 0: none yet
    seconds: float       # since the tuning began


@dataclass
class TuneResult:
    """What anycl.tune did."""
    tuned: bool          # False: first-use tuning found nothing to do (`skipped` says why)
    stopped: bool        # the progress callback stopped it: the best set found so far is kept
    candidates: int      # parameter sets measured
    seconds: float       # how long it took
    ms_before: float     # one pass over the model's GEMMs before, and after (0 when stopped early)
    ms_after: float
    path: str            # the device's tuning file
    skipped: str = ""    # why first-use tuning did not run
    against: str = ""    # what it was measured against: "the pocl-cpu-avx512.txt parameters" (the device's
                         # tuning database entry), "CLBlast's own parameters"; "" when it did not tune
    kept_entry: bool = False  # nothing beat those parameters by 5 %, so they were kept (ms_after == ms_before)


def tune(model, batch_size=128, quick=False, minutes=None, progress=None, verbose=1, runtime=None,
         _first_use=False):
    """Tunes CLBlast's GEMM for the runtime's device at `model`'s GEMMs at `batch_size` rows (the
    batch it trains at). `quick`: the shortlists only. `minutes`: the search's time (default 8, 16
    for a CNN, 1.6 quick). `progress(p)` sees each line as a TuneProgress and returns False to stop
    (the best set found so far is kept); `verbose=1` prints each line. Raises UnsupportedError when
    anycl's worker program is not found (the message says where it looked)."""
    from .model import _runtime  # here: model.py imports this module for fit's first use
    rt = _runtime(runtime)
    if minutes is not None and not minutes > 0:
        raise errors.InvalidArgumentError(f"tune(minutes={minutes!r}): pass a positive time, or None for the default")
    o = _TuneOptions()
    lib.anycl_tune_options_init(ctypes.byref(o))
    o.quick, o.first_use = int(bool(quick)), int(bool(_first_use))
    o.minutes = float(minutes or 0)
    o.batch = int(batch_size)

    def on_progress(p, _user):
        p = p.contents
        seen = TuneProgress(p.line.decode("utf-8", "replace"), p.stage.decode("utf-8", "replace"), p.candidates,
                            p.best_seconds, p.seconds)
        if verbose:
            print(seen.line, flush=True)
        go_on = True if progress is None else progress(seen)
        return 0 if go_on is None or go_on else 1

    guard = CallbackGuard()  # an exception in `progress` stops the tuning and is raised below
    callback = _TUNE_CALLBACK(guard.wrap(on_progress))
    o.on_progress = callback
    r = _TuneResult()
    lib.anycl_tune_result_init(ctypes.byref(r))
    status = lib.anycl_tune(model._handle(), rt._h, ctypes.byref(o), ctypes.byref(r))
    guard.reraise()
    check(status)
    skipped = "" if r.tuned else text(lib.anycl_first_use_tuning_skipped, rt._h)
    return TuneResult(bool(r.tuned), bool(r.stopped), r.candidates, r.seconds, r.ms_before, r.ms_after,
                      text(lib.anycl_tuning_file_path, rt._h), skipped,
                      against=r.against.decode("utf-8", "replace"), kept_entry=bool(r.kept_entry))


def first_use(model, runtime, batch_size, verbose, autotune):
    """fit()'s first-use tuning, under `anycl train`'s policy and opt-outs (autotune=False,
    ANYCL_AUTOTUNE=off): a quick tune on a CPU with neither a tuning nor a specific database entry.
    A failure is a warning, and training goes on with the parameters it had, as in `anycl train`."""
    if not autotune:
        return None
    import warnings
    if text(lib.anycl_first_use_tuning_skipped, runtime._h):
        return None
    if verbose:
        print("first use of this device without a tuning: measuring a shortlist of CLBlast parameter sets at "
              "this model's GEMMs (about two minutes, once per device and driver; fit(autotune=False) or "
              "ANYCL_AUTOTUNE=off skips it)", flush=True)
    try:
        result = tune(model, batch_size=batch_size, verbose=verbose > 1, runtime=runtime, _first_use=True)
    except errors.Error as e:
        warnings.warn(f"anycl: first-use tuning failed ({e}); training goes on with the parameters it had — "
                      "anycl.tune(model) retries it", RuntimeWarning, stacklevel=3)
        return None
    if verbose and result.tuned and result.ms_after:
        gain = result.ms_before / result.ms_after
        print(f"first-use tuning: the model's GEMMs take {result.ms_before:.3f} → {result.ms_after:.3f} ms per "
              f"pass against the parameters the device ran ({gain:.2f}x; the same when nothing beat them by "
              f"5 % and they were kept), in {result.seconds:.0f} s; stored for this device and driver",
              file=sys.stdout, flush=True)
    return result
