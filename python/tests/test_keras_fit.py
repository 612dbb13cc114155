# fit() as a Keras user reads it: verbose=1 a progress bar per epoch, verbose=2 one line per epoch,
# verbose=0 silence; and Keras' metric names in History, callbacks' logs and evaluate (a regressor's
# "mae"/"val_mae", a classifier's "accuracy").

import io
import re

import numpy as np
import pytest

import anycl
from anycl._progress import ProgressBar
from anycl.layers import Dense


def regression_data(n=256):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(n, 6)).astype(np.float32)
    return x, x.sum(axis=1, keepdims=True).astype(np.float32)


def classification_data(n=256):
    x, t = regression_data(n)
    return x, (t[:, 0] > 0).astype(np.int64)


def regressor(metrics=("mae",)):
    return anycl.Sequential([Dense(8), Dense(1)], input_shape=(6,)).compile("adam", loss="mse", metrics=list(metrics))


def classifier():
    return anycl.Sequential([Dense(8), Dense(2)], input_shape=(6,)).compile("adam", metrics=["accuracy"])


def test_verbose_1_prints_a_keras_progress_bar_per_epoch(runtime, capsys):
    x, y = classification_data()
    classifier().fit(x, y, epochs=2, batch_size=32, validation_split=0.25, verbose=1, runtime=runtime)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2", out
    bar = (r"6/6 \[={30}\] - \d+m?s \d+(us|ms|s)/step - loss: \d\.\d{4} - accuracy: \d\.\d{4} - "
           r"val_loss: \d\.\d{4} - val_accuracy: \d\.\d{4}")
    assert re.fullmatch(bar, lines[1]) and re.fullmatch(bar, lines[3]), out
    assert len(lines) == 4  # captured output is no terminal: no redrawn partial bars


def test_verbose_2_prints_one_line_per_epoch_and_0_nothing(runtime, capsys):
    x, t = regression_data()
    model = regressor()
    model.fit(x, t, epochs=2, batch_size=64, verbose=2, runtime=runtime)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    assert re.fullmatch(r"4/4 - \d+m?s \d+(us|ms|s)/step - loss: \d+\.\d{4} - mae: \d+\.\d{4}", lines[1]), lines
    model.fit(x, t, epochs=1, batch_size=64, verbose=0, runtime=runtime)
    model.fit(x, t, epochs=1, batch_size=64, runtime=runtime)  # anycl's default: silent
    assert capsys.readouterr().out == ""


def test_verbose_auto_is_1_and_nonsense_is_refused(runtime, capsys):
    x, y = classification_data(64)
    model = classifier()
    model.fit(x, y, epochs=1, verbose="auto", runtime=runtime)
    assert capsys.readouterr().out.startswith("Epoch 1/1\n1/1 [")
    for bad in (3, -1, "yes", 1.5):
        with pytest.raises(anycl.InvalidArgumentError, match="verbose"):
            model.fit(x, y, epochs=1, verbose=bad, runtime=runtime)


def test_on_a_terminal_the_bar_is_redrawn_in_place_with_an_eta():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    bar = ProgressBar(1, epochs=3, stream=out)
    bar.progress(2, 5, 20, 1.0, {"loss": 0.5, "accuracy": 0.75})
    bar.progress(2, 10, 20, 2.0, {"loss": 0.4, "accuracy": 0.8})
    bar.progress(2, 20, 20, 4.0, {"loss": 0.3, "accuracy": 0.9})
    bar.epoch_end(2, 4.5, {"loss": 0.3, "accuracy": 0.9}, 20)
    text = out.getvalue()
    assert text.startswith("Epoch 2/3\n\r 5/20 [=======>......................] - ETA: 3s - loss: 0.5000")
    assert "\r10/20 [===============>..............] - ETA: 2s - loss: 0.4000 - accuracy: 0.8000" in text
    assert text.endswith("\r20/20 [==============================] - 4s 200ms/step - loss: 0.3000 - accuracy: 0.9000\n")


def test_a_regressor_logs_mae_as_keras_names_it(runtime):
    x, t = regression_data()
    model = regressor()
    seen = []

    class Logs(anycl.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(sorted(logs))

    history = model.fit(x, t, epochs=2, batch_size=32, validation_split=0.25, callbacks=[Logs()], runtime=runtime)
    assert sorted(history.history) == ["loss", "mae", "val_loss", "val_mae"]
    assert seen == [["loss", "mae", "val_loss", "val_mae"]] * 2
    mse, mae = model.evaluate(x, t, runtime=runtime)
    assert model.evaluate(x, t, return_dict=True, runtime=runtime) == {"loss": mse, "mae": mae}
    assert abs(mae - float(np.abs(model.predict(x, runtime=runtime) - t).mean())) < 1e-4


def test_the_metric_takes_the_keras_name_compile_gave_it(runtime):
    x, t = regression_data()
    model = regressor(metrics=["mean_absolute_error"])
    history = model.fit(x, t, epochs=1, validation_data=(x, t), runtime=runtime)
    assert sorted(history.history) == ["loss", "mean_absolute_error", "val_loss", "val_mean_absolute_error"]
    assert model.metrics_names == ["loss", "mean_absolute_error"]
    x, y = classification_data()
    model = anycl.Sequential([Dense(8), Dense(2)], input_shape=(6,)).compile("adam", metrics=["acc"])
    assert sorted(model.fit(x, y, epochs=1, validation_split=0.25, runtime=runtime).history) == [
        "acc", "loss", "val_acc", "val_loss"]


def test_a_classifier_keeps_accuracy(runtime):
    x, y = classification_data()
    model = classifier()
    history = model.fit(x, y, epochs=1, validation_split=0.25, runtime=runtime)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert list(model.evaluate(x, y, return_dict=True, runtime=runtime)) == ["loss", "accuracy"]
