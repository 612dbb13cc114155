# The Python door's row of the cross-product table (tests/test_doors.cpp holds C++, C and the CLI):
# every model kind × save → load → predict bit-equal, Keras' evaluate, val_loss during fit, and
# checkpoints, and evaluate's Keras shape.

import numpy as np
import pytest

import anycl
from anycl.layers import Conv2D, Dense, Flatten, MaxPool2D

# (name, layers, input_shape, regression): the same kinds as tests/test_doors.cpp.
KINDS = [
    ("dense classifier", lambda: [Dense(16), Dense(3)], (8,), False),
    ("dense regressor", lambda: [Dense(16), Dense(2)], (8,), True),
    ("conv classifier", lambda: [Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(8), Dense(3)], (1, 8, 8), False),
    ("conv regressor", lambda: [Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(8), Dense(2)], (1, 8, 8), True),
]


def data(input_shape, regression, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n,) + input_shape).astype(np.float32)
    flat = x.reshape(n, -1)
    s = (flat * np.where(np.arange(flat.shape[1]) % 3 == 0, 1, -1)).sum(axis=1)
    if regression:
        return x, np.stack([np.tanh(s), 0.5 * s], axis=1).astype(np.float32)
    return x, np.digitize(s, [-0.5, 0.5]).astype(np.int64)


@pytest.mark.parametrize("name,layers,input_shape,regression", KINDS, ids=[k[0] for k in KINDS])
def test_every_kind_round_trips_through_python(runtime, tmp_path, name, layers, input_shape, regression):
    x, y = data(input_shape, regression, 240, 1)
    xt, yt = data(input_shape, regression, 60, 2)
    model = anycl.Sequential(layers(), input_shape=input_shape)
    model.compile(optimizer="adam", loss="mse" if regression else "sparse_categorical_crossentropy")
    ck = tmp_path / "ck"
    history = model.fit(x, y, epochs=2, batch_size=32, validation_data=(xt, yt), checkpoint_dir=str(ck),
                        runtime=runtime)
    assert len(history.history["val_loss"]) == 2 and np.isfinite(history.history["val_loss"]).all()
    assert (ck / "checkpoint.anyclckpt").is_file()

    path = str(tmp_path / "m.anycl")
    model.save(path)
    loaded = anycl.load_model(path)
    assert loaded.loss == ("mse" if regression else "softmax_cross_entropy")
    a, b = model.predict(xt, runtime=runtime), loaded.predict(xt, runtime=runtime)
    assert a.shape == (60, 2 if regression else 3)
    assert a.tobytes() == b.tobytes()

    result = loaded.evaluate(xt, yt, runtime=runtime)
    assert isinstance(result, list) and len(result) == 2 and result == model.evaluate(xt, yt, runtime=runtime)
    assert loaded.metrics_names == ["loss", "mae" if regression else "accuracy"]
    as_dict = loaded.evaluate(xt, yt, return_dict=True, runtime=runtime)
    assert list(as_dict) == loaded.metrics_names and list(as_dict.values()) == result
    loss, metric = result
    if regression:
        err = a - yt
        assert loss == pytest.approx(float(np.mean(err**2)), rel=1e-4)
        assert metric == pytest.approx(float(np.mean(np.abs(err))), rel=1e-4)
    else:
        assert 0 <= metric <= 1 and loss > 0


def test_evaluate_speaks_keras_and_never_names_cpp_calls(runtime):
    x, y = data((8,), True, 64, 3)
    model = anycl.Sequential([Dense(4), Dense(2)], input_shape=(8,)).compile(loss="mse")
    model.fit(x, y, epochs=1, runtime=runtime)
    labels = np.zeros(64, dtype=np.int64)
    with pytest.raises(anycl.Error) as e:
        model.evaluate(x, labels, runtime=runtime)
    assert "predict_outputs" not in str(e.value)
