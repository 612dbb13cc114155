# Every bad input raises a clear anycl.Error subclass (never a crash), and the model stays usable.
import numpy as np
import pytest

import anycl


@pytest.fixture()
def model(runtime):
    m = anycl.Sequential("8", input_shape=(4,), outputs=3, dropout=0)
    m.compile()
    return m


X = np.zeros((10, 4), dtype=np.float32)
Y = np.arange(10) % 3


def test_wrong_dtypes(model, runtime):
    with pytest.raises(anycl.DTypeError, match="astype"):
        model.fit(X.astype(np.float64), Y, runtime=runtime)
    with pytest.raises(anycl.DTypeError, match="integers"):
        model.fit(X, Y.astype(np.float32), runtime=runtime)
    with pytest.raises(anycl.DTypeError, match="numpy array"):
        model.predict([[0, 0, 0, 0]], runtime=runtime)
    with pytest.raises(TypeError):  # also a TypeError
        model.predict(X.astype(np.int32), runtime=runtime)


def test_wrong_shapes(model, runtime):
    with pytest.raises(anycl.ShapeError, match="takes 4"):
        model.fit(np.zeros((10, 5), dtype=np.float32), Y, runtime=runtime)
    with pytest.raises(anycl.ShapeError, match="9"):
        model.fit(X, Y[:9], runtime=runtime)
    with pytest.raises(anycl.ShapeError):
        model.predict(np.zeros(4, dtype=np.float32), runtime=runtime)
    with pytest.raises(anycl.ShapeError, match="input_shape"):
        anycl.Sequential("8", input_shape=(2, 2), outputs=3)


def test_nan_and_infinite_values(model, runtime):
    x = X.copy()
    x[3, 2] = np.nan
    with pytest.raises(anycl.InvalidArgumentError, match=r"x\[14\] is nan"):
        model.fit(x, Y, runtime=runtime)
    model.fit(X, Y, epochs=1, runtime=runtime)
    x[3, 2] = np.inf
    with pytest.raises(ValueError, match="inf"):
        model.predict(x, runtime=runtime)


def test_label_ranges(model, runtime):
    y = Y.copy()
    y[4] = 3
    with pytest.raises(anycl.InvalidArgumentError, match=r"y\[4\] = 3"):
        model.fit(X, y, runtime=runtime)
    y[4] = -1
    with pytest.raises(anycl.InvalidArgumentError, match=r"y\[4\] = -1"):
        model.fit(X, y, runtime=runtime)


def test_bad_options_models_and_files(model, runtime, tmp_path):
    with pytest.raises(anycl.InvalidArgumentError, match="adagrad"):
        anycl.Sequential("8", input_shape=(4,), outputs=3).compile(optimizer="adagrad").fit(X, Y, runtime=runtime)
    with pytest.raises(anycl.InvalidArgumentError, match="bogus"):
        anycl.Sequential("8,bogus", input_shape=(4,), outputs=3).compile()
    with pytest.raises(anycl.InvalidArgumentError, match="validation_split"):
        model.fit(X, Y, validation_split=1.5, runtime=runtime)
    with pytest.raises(anycl.InvalidArgumentError, match="no weights"):
        anycl.Sequential("8", input_shape=(4,), outputs=3).compile().predict(X, runtime=runtime)
    with pytest.raises(anycl.DataError, match="missing.anycl"):
        anycl.load_model(tmp_path / "missing.anycl")
    (tmp_path / "junk.anycl").write_bytes(b"not a model")
    with pytest.raises(anycl.DataError, match="junk.anycl"):
        anycl.load_model(tmp_path / "junk.anycl")
    with pytest.raises(anycl.DeviceError, match="no-such-device"):
        anycl.Runtime("no-such-device")
    model.fit(X, Y, epochs=1, runtime=runtime)  # still usable after every error above
    assert model.predict(X, runtime=runtime).shape == (10, 3)
