"""The exceptions anycl raises: one class per C API status, under anycl.Error.

Each message is the library's own (what is wrong, then what to do). Argument errors also derive
from Python's ValueError or TypeError, so code that catches those keeps working.
"""


class Error(Exception):
    """Base of every exception anycl raises."""


class InvalidArgumentError(Error, ValueError):
    """A bad argument, shape, option, label or value (ANYCL_ERROR_INVALID_ARGUMENT)."""


class ShapeError(InvalidArgumentError):
    """An array's shape does not fit the model or the other arrays."""


class DTypeError(Error, TypeError):
    """An array's dtype is not one anycl takes (float32 or uint8 features, integer labels)."""


class DeviceError(Error):
    """No OpenCL device, or a device spec that matches none."""


class OpenCLError(Error):
    """An OpenCL or CLBlast call failed."""


class BuildError(Error):
    """An OpenCL program failed to compile."""


class DataError(Error, OSError):
    """A file is missing, malformed or inconsistent."""


class NumericalError(Error, ArithmeticError):
    """Training diverged: the loss or the weights became NaN or infinite."""


class UnsupportedError(Error):
    """This build of the library lacks the feature (e.g. ONNX export)."""


class IoError(Error, OSError):
    """A file or folder could not be written or created: a full disk, no permission, a folder or
    device where a file was named (ANYCL_ERROR_IO)."""


class VersionError(Error):
    """The shared library is older than this package."""


# C API status code -> exception class (include/anycl/anycl.h).
BY_STATUS = {
    1: InvalidArgumentError,
    2: DeviceError,
    3: OpenCLError,
    4: BuildError,
    5: DataError,
    6: NumericalError,
    7: MemoryError,
    8: UnsupportedError,
    9: VersionError,
    12: IoError,
}
