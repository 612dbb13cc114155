"""The shared library and the C API's prototypes (include/anycl/anycl.h), through ctypes.

ctypes, not cffi: it is in the standard library (no compiler or extra package at install or run
time, so the package works wherever the DLL or .so builds), and a ctypes call releases the GIL
while the library works. The library is $ANYCL_LIBRARY if set, else the one bundled in the
package, else the system's (ctypes.util.find_library).
"""

import ctypes
import ctypes.util
import glob
import os
import sys

from . import errors

API_VERSION = 5  # ANYCL_API_VERSION of the header this module mirrors

c_size_p = ctypes.POINTER(ctypes.c_size_t)


class ModelOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("layers", ctypes.c_char_p),
        ("activation", ctypes.c_char_p),
        ("init", ctypes.c_char_p),
        ("dropout", ctypes.c_float),
        ("loss", ctypes.c_char_p),
        ("input_shape", ctypes.c_size_t * 3),
        ("outputs", ctypes.c_size_t),
    ]


class Progress(ctypes.Structure):
    _fields_ = [
        ("epoch", ctypes.c_size_t),
        ("epochs", ctypes.c_size_t),
        ("step", ctypes.c_size_t),
        ("steps", ctypes.c_size_t),
        ("loss", ctypes.c_double),
        ("accuracy", ctypes.c_double),
        ("seconds", ctypes.c_double),
    ]


class Epoch(ctypes.Structure):
    _fields_ = [
        ("epoch", ctypes.c_size_t),
        ("loss", ctypes.c_double),
        ("accuracy", ctypes.c_double),
        ("has_validation", ctypes.c_int),
        ("val_loss", ctypes.c_double),
        ("val_accuracy", ctypes.c_double),
        ("seconds", ctypes.c_double),
        ("learning_rate", ctypes.c_double),  # API version 2
    ]


PROGRESS_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Progress), ctypes.c_void_p)
EPOCH_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Epoch), ctypes.c_void_p)


class TrainOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("epochs", ctypes.c_size_t),
        ("batch", ctypes.c_size_t),
        ("optimizer", ctypes.c_char_p),
        ("lr", ctypes.c_float),
        ("seed", ctypes.c_uint64),
        ("validation_split", ctypes.c_double),
        ("checkpoint_dir", ctypes.c_char_p),
        ("progress_interval_s", ctypes.c_double),
        ("on_progress", PROGRESS_CALLBACK),
        ("on_epoch", EPOCH_CALLBACK),
        ("user", ctypes.c_void_p),
        # API version 2: the learning-rate schedule
        ("lr_schedule", ctypes.c_char_p),
        ("decay_steps", ctypes.c_double),
        ("decay_rate", ctypes.c_double),
        ("staircase", ctypes.c_int),
        ("alpha", ctypes.c_double),
        ("boundaries", ctypes.POINTER(ctypes.c_uint64)),
        ("boundary_count", ctypes.c_size_t),
        ("values", ctypes.POINTER(ctypes.c_float)),
        ("monitor", ctypes.c_char_p),
        ("factor", ctypes.c_double),
        ("patience", ctypes.c_size_t),
        ("min_delta", ctypes.c_double),
        ("cooldown", ctypes.c_size_t),
        ("min_lr", ctypes.c_double),
        ("resume_from", ctypes.c_char_p),  # API version 3
        ("warmup_target", ctypes.c_double),  # API version 4: CosineDecay's warm-up
        ("warmup_steps", ctypes.c_double),
    ]


def _library_path():
    explicit = os.environ.get("ANYCL_LIBRARY")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    names = ["anycl.dll", "libanycl.dll"] if sys.platform == "win32" else ["libanycl.so*", "libanycl*.dylib"]
    for pattern in names:
        found = sorted(glob.glob(os.path.join(here, pattern)))
        if found:
            return found[0]
    system = ctypes.util.find_library("anycl")
    if system:
        return system
    raise ImportError(
        "anycl: the shared library was not found in the package or on the system — install the package "
        "with `pip install .` from the anycl repository, or set ANYCL_LIBRARY to libanycl's path"
    )


def _declare(lib):
    P = ctypes.POINTER
    vp = ctypes.c_void_p
    dataset_create = [vp, ctypes.c_size_t, ctypes.c_size_t, vp, ctypes.c_size_t, P(vp)]  # x, n, features, y, k, out
    sigs = {
        "anycl_api_version": (ctypes.c_int, []),
        "anycl_version_string": (ctypes.c_char_p, []),
        "anycl_check_version": (ctypes.c_int, [ctypes.c_int]),
        "anycl_last_error": (ctypes.c_char_p, []),
        "anycl_devices_json": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, c_size_p]),
        "anycl_runtime_create": (ctypes.c_int, [ctypes.c_char_p, P(vp)]),
        "anycl_runtime_destroy": (None, [vp]),
        "anycl_runtime_device_name": (ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_size_t, c_size_p]),
        "anycl_model_options_init": (None, [P(ModelOptions)]),
        "anycl_model_create": (ctypes.c_int, [P(ModelOptions), P(vp)]),
        "anycl_model_load": (ctypes.c_int, [ctypes.c_char_p, P(vp)]),
        "anycl_model_destroy": (None, [vp]),
        "anycl_model_input_size": (ctypes.c_int, [vp, c_size_p]),
        "anycl_model_output_size": (ctypes.c_int, [vp, c_size_p]),
        "anycl_model_loss": (ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_size_t, c_size_p]),
        "anycl_model_has_weights": (ctypes.c_int, [vp, P(ctypes.c_int)]),
        "anycl_model_summary": (ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_size_t, c_size_p]),
        "anycl_model_save": (ctypes.c_int, [vp, ctypes.c_char_p]),
        "anycl_model_export_onnx": (ctypes.c_int, [vp, ctypes.c_char_p]),
        "anycl_dataset_create_classes": (ctypes.c_int, dataset_create),
        "anycl_dataset_create_classes_u8": (ctypes.c_int, dataset_create),
        "anycl_dataset_create_targets": (ctypes.c_int, dataset_create),
        "anycl_dataset_destroy": (None, [vp]),
        "anycl_train_options_init": (None, [P(TrainOptions)]),
        "anycl_train": (ctypes.c_int,
                        [vp, vp, vp, vp, P(TrainOptions), P(Epoch), ctypes.c_size_t, c_size_p, P(ctypes.c_int)]),
        "anycl_evaluate": (ctypes.c_int, [vp, vp, vp, P(ctypes.c_double), P(ctypes.c_double)]),
        "anycl_predict": (ctypes.c_int, [vp, vp, vp, ctypes.c_size_t, vp, ctypes.c_size_t]),
        "anycl_evaluate_metric": (ctypes.c_int, [vp, vp, vp, P(ctypes.c_double), P(ctypes.c_double)]),
        "anycl_model_weight_count": (ctypes.c_int, [vp, c_size_p]),
        "anycl_model_weight_shape": (ctypes.c_int, [vp, ctypes.c_size_t, c_size_p, c_size_p]),
        "anycl_model_get_weights": (ctypes.c_int, [vp, ctypes.c_size_t, vp, ctypes.c_size_t]),
        "anycl_model_set_weights": (ctypes.c_int, [vp, ctypes.c_size_t, vp, ctypes.c_size_t]),
        "anycl_model_input_shape": (ctypes.c_int, [vp, c_size_p]),
    }
    for name, (restype, argtypes) in sigs.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes


lib = ctypes.CDLL(_library_path())
_declare(lib)
if lib.anycl_check_version(API_VERSION) != 0:
    raise errors.VersionError(lib.anycl_last_error().decode("utf-8", "replace"))


def check(status):
    """Raises the exception class of a failed call's status, with the library's message."""
    if status == 0:
        return
    message = lib.anycl_last_error().decode("utf-8", "replace")
    raise errors.BY_STATUS.get(status, errors.Error)(message)


def text(call, *handle):
    """A text the C API returns through a (buffer, capacity, length) triple: ask, then fetch."""
    length = ctypes.c_size_t(0)
    status = call(*handle, None, 0, ctypes.byref(length))
    if status not in (0, 10):  # 10: ANYCL_ERROR_BUFFER_TOO_SMALL, the expected answer to the size query
        check(status)
    buffer = ctypes.create_string_buffer(length.value + 1)
    check(call(*handle, buffer, len(buffer), ctypes.byref(length)))
    return buffer.value.decode("utf-8", "replace")
