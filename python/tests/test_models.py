# Regression with MSE, a small CNN on uint8 images, save → load → predict equal, ONNX export,
# devices, history and callbacks.
import os
import signal
import threading

import numpy as np
import pytest

import anycl
from anycl.layers import Conv2D, Dense, Flatten, MaxPool2D


def test_devices_lists_the_json_of_anycl_devices(runtime):
    devices = anycl.devices()
    assert devices and {"index", "name", "selected"} <= set(devices[0])
    assert sum(d["selected"] for d in devices) == 1
    assert runtime.device_name in [d["name"] for d in devices]


def test_mse_regression_learns_a_line(runtime):
    x = np.linspace(-1, 1, 512, dtype=np.float32).reshape(-1, 1)
    t = (2 * x + 1).astype(np.float32)
    model = anycl.Sequential("none", input_shape=(1,), outputs=1)
    model.compile(optimizer="adam", loss="mse", lr=0.05)
    history = model.fit(x, t, epochs=60, batch_size=32, runtime=runtime)
    assert len(history.history["loss"]) == 60 and history.history["loss"][-1] < 1e-3
    pred = model.predict(np.array([[0.25], [-0.5]], dtype=np.float32), runtime=runtime)
    np.testing.assert_allclose(pred[:, 0], [1.5, 0.0], atol=0.05)


def images(n=128):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 60, size=(n, 1, 8, 8), dtype=np.uint8)
    y = np.arange(n) % 2
    x[y == 1, :, :, :4] = 220  # class 1: a bright left half
    return x, y


def test_cnn_on_uint8_images_learns_and_reloads_equal(runtime, tmp_path):
    x, y = images()
    model = anycl.Sequential([Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(16), Dense(2)], input_shape=(1, 8, 8))
    model.compile(optimizer="adam")
    history = model.fit(x, y, epochs=8, batch_size=16, validation_split=0.25, runtime=runtime)
    assert history.history["val_accuracy"][-1] > 0.9
    assert "Conv2D" in model.summary_text()
    loss, accuracy = model.evaluate(x, y, runtime=runtime)
    assert accuracy > 0.9 and loss > 0
    p = model.predict(x, runtime=runtime)
    assert p.shape == (128, 2) and np.allclose(p.sum(axis=1), 1, atol=1e-5)
    model.save(tmp_path / "cnn.anycl")
    again = anycl.load_model(tmp_path / "cnn.anycl")
    assert np.array_equal(again.predict(x, runtime=runtime), p)
    assert again.loss == "softmax_cross_entropy"


def test_export_onnx_writes_a_model_or_says_it_is_not_built(runtime, tmp_path):
    x, y = images(32)
    model = anycl.Sequential("8", input_shape=(64,), outputs=2, dropout=0)
    model.compile()
    model.fit(x.reshape(32, 64), y, epochs=1, runtime=runtime)
    try:
        model.export_onnx(tmp_path / "m.onnx")
    except anycl.UnsupportedError as e:
        assert "ANYCL_WITH_ONNX" in str(e)
        return
    assert (tmp_path / "m.onnx").stat().st_size > 100


def test_callbacks_see_each_epoch_and_can_stop(runtime):
    x, y = images()

    class StopAtTwo(anycl.Callback):
        def __init__(self):
            self.epochs = []

        def on_epoch_end(self, epoch, logs):
            self.epochs.append((epoch, logs["loss"]))
            return epoch >= 2

    model = anycl.Sequential("16", input_shape=(64,), outputs=2)
    model.compile()
    stop = StopAtTwo()
    history = model.fit(x.reshape(128, 64), y, epochs=5, callbacks=[stop], runtime=runtime)
    assert [e for e, _ in stop.epochs] == [1, 2] and history.epoch == [1, 2]


def test_ctrl_c_stops_after_the_current_step_and_leaves_the_model_usable(runtime):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    x = np.random.default_rng(0).standard_normal((4096, 64)).astype(np.float32)
    y = np.arange(4096) % 2
    model = anycl.Sequential("256,256", input_shape=(64,), outputs=2)
    model.compile()

    class InterruptOnce(anycl.Callback):  # Ctrl-C as the terminal sends it, during a step
        sent = False

        def on_progress(self, epoch, step, steps, logs):
            if not self.sent:
                self.sent = True
                os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        model.fit(x, y, epochs=50, batch_size=32, callbacks=[InterruptOnce()], runtime=runtime)
    assert model.predict(x[:4], runtime=runtime).shape == (4, 2)  # the weights reached are kept
