"""MNIST-format folders (train/t10k IDX files, plain or .gz) as numpy arrays, as Keras'
`mnist.load_data()` returns them: ((x_train, y_train), (x_test, y_test)), images uint8 (n, 28, 28).
The folder is `path`, else $ANYCL_DATA, else Debian's dataset-fashion-mnist. `mnist.load_data()` and
`fashion_mnist.load_data()` are Keras' names for it (anycl downloads nothing: MNIST is read from
$ANYCL_DATA or the folder passed)."""

import gzip
import os
import types

import numpy as np

from . import errors

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"


def _read_idx(folder, stem):
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rb") as f:
                header = f.read(4)
                if len(header) != 4 or header[:2] != b"\0\0" or header[2] != 8 or header[3] not in (1, 3):
                    raise errors.DataError(f"{path} is not an IDX file of bytes (bad magic number)")
                dims = np.frombuffer(f.read(4 * header[3]), dtype=">u4").astype(np.int64)
                count = int(np.prod(dims))
                data = f.read(count)
                if len(data) != count:
                    raise errors.DataError(f"{path} is truncated: {len(data)} of {count} bytes")
                return np.frombuffer(data, dtype=np.uint8).reshape(dims)
    raise errors.DataError(f"no {stem}[.gz] in {folder} — pass the folder of an MNIST-format data set")


def load_data(path=None):
    """((x_train, y_train), (x_test, y_test)) from an MNIST-format folder."""
    folder = path or os.environ.get("ANYCL_DATA") or DEFAULT_DIR
    return ((_read_idx(folder, "train-images-idx3-ubyte"), _read_idx(folder, "train-labels-idx1-ubyte")),
            (_read_idx(folder, "t10k-images-idx3-ubyte"), _read_idx(folder, "t10k-labels-idx1-ubyte")))


def _mnist_load_data(path=None):
    """Keras' mnist.load_data(): an MNIST folder, `path` or $ANYCL_DATA (anycl downloads nothing)."""
    folder = path or os.environ.get("ANYCL_DATA")
    if not folder:
        raise errors.DataError("mnist.load_data(): anycl downloads nothing — set ANYCL_DATA to a folder holding "
                               "MNIST's IDX files (train-images-idx3-ubyte[.gz], ...), or pass it as path=")
    return load_data(folder)


mnist = types.SimpleNamespace(load_data=_mnist_load_data)  # `from anycl.datasets import mnist`, as Keras'
fashion_mnist = types.SimpleNamespace(load_data=load_data)  # $ANYCL_DATA, else Debian's dataset-fashion-mnist
