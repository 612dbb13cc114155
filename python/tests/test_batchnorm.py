"""BatchNormalization through the Python package (C API underneath): Keras' names and arguments, the
summary's non-trainable count, get_weights/set_weights in Keras' order, predict with the moving
statistics (checked against numpy), and save/load keeping them."""

import numpy as np
import pytest

import anycl
from anycl.layers import BatchNormalization, Conv2D, Dense, Flatten, MaxPool2D


def data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 1, 6, 6)).astype(np.float32)
    s = x.reshape(n, -1)[:, ::3].sum(axis=1)
    return x, np.digitize(s, [-0.5, 0.5]).astype(np.int64)


def cnn():
    return anycl.Sequential([Conv2D(2, 3, activation="linear"), BatchNormalization(axis=1), MaxPool2D(2),
                             Flatten(), Dense(4, activation="relu"), BatchNormalization(momentum=0.9), Dense(3)],
                            input_shape=(1, 6, 6)).compile(optimizer="adam")


def test_arguments_are_checked_and_become_tokens():
    assert BatchNormalization().token == "bn"
    assert BatchNormalization(momentum=0.9, epsilon=1e-5).token == "bn0.9_1e-05"
    for bad in ({"axis": 2}, {"momentum": 1.5}, {"epsilon": 0}):
        with pytest.raises(anycl.InvalidArgumentError, match="BatchNormalization"):
            BatchNormalization(**bad)


def test_batchnorm_cnn_trains_predicts_with_moving_statistics_and_round_trips(runtime, tmp_path):
    x, y = data(128, 3)
    model = cnn()
    summary = model.summary_text()
    assert "BatchNormalization" in summary
    assert "Non-trainable params: 12" in summary  # 2·2 + 2·4 moving statistics
    model.fit(x, y, epochs=2, batch_size=32, runtime=runtime)
    w = model.get_weights()
    assert [a.shape for a in w] == [(3, 3, 1, 2), (2,), (2,), (2,), (2,), (2,), (8, 4), (4,), (4,), (4,), (4,),
                                    (4,), (4, 3), (3,)]
    assert not np.all(w[4] == 0) and not np.all(w[5] == 1)  # the moving statistics moved

    # numpy inference with Keras' layout: BatchNormalization uses the moving statistics.
    def bn(h, gamma, beta, mean, var, axis):
        shape = [1] * h.ndim
        shape[axis] = -1
        r = lambda v: v.reshape(shape)  # noqa: E731
        return (h - r(mean)) / np.sqrt(r(var) + 0.001) * r(gamma) + r(beta)

    conv = np.zeros((len(x), 2, 4, 4), dtype=np.float64)
    for i in range(4):
        for j in range(4):
            conv[:, :, i, j] = np.einsum("nab,abf->nf", x[:, 0, i:i + 3, j:j + 3], w[0][:, :, 0, :]) + w[1]
    h = bn(conv, *w[2:6], axis=1)
    h = h.reshape(len(x), 2, 2, 2, 2, 2).max(axis=(3, 5)).reshape(len(x), -1)
    h = bn(np.maximum(h @ w[6] + w[7], 0), *w[8:12], axis=1)
    logits = h @ w[12] + w[13]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict(x, runtime=runtime), p / p.sum(axis=1, keepdims=True), atol=1e-5)

    path = str(tmp_path / "bn.anycl")
    model.save(path)
    loaded = anycl.load_model(path)
    assert all((a == b).all() for a, b in zip(loaded.get_weights(), w))
    assert loaded.predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()

    fresh = cnn()
    fresh.set_weights(w)
    assert fresh.predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()


def test_arrays_not_set_on_a_fresh_model_start_at_keras_initial_values():
    # One array set through the C API on a model with no weights: the others start as zeros, but
    # BatchNormalization's gamma and moving variance at ones (a variance of 0 scales inputs by 1/sqrt(eps)).
    from anycl._lib import check, lib

    model = cnn()
    kernel = np.full((3, 3, 1, 2), 0.5, dtype=np.float32)
    check(lib.anycl_model_set_weights(model._h, 0, kernel.ctypes.data, kernel.size))
    w = model.get_weights()
    np.testing.assert_array_equal(w[0], kernel)
    gamma, beta, mean, variance = w[2:6]
    np.testing.assert_array_equal(gamma, np.ones(2, np.float32))
    np.testing.assert_array_equal(beta, np.zeros(2, np.float32))
    np.testing.assert_array_equal(mean, np.zeros(2, np.float32))
    np.testing.assert_array_equal(variance, np.ones(2, np.float32))
