"""anycl for Python: a thin ctypes layer over anycl's C API (include/anycl/anycl.h).

    import anycl, numpy as np
    from anycl.layers import Dense, Dropout
    model = anycl.Sequential([Dense(512, activation="relu"), Dropout(0.2), Dense(10)], input_shape=(784,))
    model.compile(optimizer="rmsprop")
    history = model.fit(x_train, y_train, epochs=5, batch_size=128, validation_split=0.1)
    probabilities = model.predict(x_test)
"""

from . import callbacks, datasets, layers, models, utils
from . import optimizers  # Keras' optimizer classes and learning-rate schedules
from ._lib import API_VERSION, lib as _lib
from .errors import (BuildError, DataError, DeviceError, DTypeError, Error, InvalidArgumentError, IoError,
                     NumericalError, OpenCLError, ShapeError, UnsupportedError, VersionError)
from .callbacks import Callback
from .layers import Input  # Keras' keras.Input(shape=...)
from .model import History, Runtime, Sequential, devices, load_model
from .tuning import TuneProgress, TuneResult, tune

__version__ = _lib.anycl_version_string().decode()

__all__ = ["API_VERSION", "BuildError", "Callback", "DataError", "DeviceError", "DTypeError", "Error", "History",
           "InvalidArgumentError", "IoError", "NumericalError", "datasets", "OpenCLError", "Runtime", "Sequential",
           "ShapeError", "UnsupportedError", "VersionError", "callbacks", "devices", "layers", "load_model"]
__all__ += ["optimizers"]
__all__ += ["Input", "models", "utils"]
__all__ += ["TuneProgress", "TuneResult", "tune"]
