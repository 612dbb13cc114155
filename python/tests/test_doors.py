# The Python door's row of the cross-product table (tests/test_doors.cpp holds C++, C and the CLI):
# every model kind × save → load → predict bit-equal, Keras' evaluate, val_loss during fit, and
# checkpoints, trained under a CosineDecay whose warm-up runs past the first epoch (so the resume
# restores the schedule's place, as in tests/test_doors.cpp); then the Keras surface: compile() on a
# loaded model, per-layer activations, a callback's exception, evaluate's shape.

import os

import numpy as np
import pytest

import anycl
from anycl.layers import (AveragePooling2D, BatchNormalization, Conv2D, Dense, Flatten, GlobalAveragePooling2D,
                          GlobalMaxPooling2D, MaxPool2D, ReLU)

# (name, layers, input_shape, loss as a Keras script names it): the same kinds as tests/test_doors.cpp.
KINDS = [
    ("dense classifier", lambda: [Dense(16), Dense(3)], (8,), "sparse_categorical_crossentropy"),
    ("dense regressor", lambda: [Dense(16), Dense(2)], (8,), "mse"),
    ("conv classifier", lambda: [Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(8), Dense(3)], (1, 8, 8),
     "sparse_categorical_crossentropy"),
    ("conv regressor", lambda: [Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(8), Dense(2)], (1, 8, 8), "mse"),
    # the second convolution's patch (4·3·3 = 36) runs Winograd's forward pass on a CPU
    ("conv regressor (Winograd on a CPU)",
     lambda: [Conv2D(4, 3), Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(8), Dense(2)], (1, 8, 8), "mse"),
    ("dense binary classifier (sigmoid)", lambda: [Dense(16), Dense(1, activation="sigmoid")], (8,),
     "binary_crossentropy"),
    ("dense multi-label classifier", lambda: [Dense(16), Dense(3)], (8,), "binary_crossentropy"),
    ("conv binary classifier (sigmoid)",
     lambda: [Conv2D(4, 3), MaxPool2D(2), Flatten(), Dense(8), Dense(1, activation="sigmoid")], (1, 8, 8),
     "binary_crossentropy"),
    ("dense mae regressor", lambda: [Dense(16), Dense(2)], (8,), "mean_absolute_error"),
    ("dense huber regressor", lambda: [Dense(16), Dense(2)], (8,), "huber"),
    ("conv classifier (average and global pooling)",
     lambda: [Conv2D(4, 3), AveragePooling2D(2), Conv2D(4, 3, padding="same"), GlobalAveragePooling2D(), Dense(8),
              Dense(3)], (1, 8, 8), "sparse_categorical_crossentropy"),
    ("conv binary classifier (global max pooling)",
     lambda: [Conv2D(4, 3), GlobalMaxPooling2D(), Dense(1, activation="sigmoid")], (1, 8, 8), "binary_crossentropy"),
    ("conv classifier (Conv2D, BatchNormalization, ReLU)",
     lambda: [Conv2D(4, 3), BatchNormalization(momentum=0.9), ReLU(), MaxPool2D(2), Flatten(), Dense(8), Dense(3)],
     (1, 8, 8), "sparse_categorical_crossentropy"),
]
ANYCL_LOSS = {"sparse_categorical_crossentropy": "softmax_cross_entropy", "mean_absolute_error": "mae"}
REGRESSION = ("mse", "mean_absolute_error", "huber")


def adam_with_warmup():
    """Adam under Keras' CosineDecay from 0 with a warm-up of 10 steps (8 steps an epoch here)."""
    schedule = anycl.optimizers.schedules.CosineDecay(0.0, decay_steps=8, alpha=0.1, warmup_target=0.002,
                                                      warmup_steps=10)
    return anycl.optimizers.Adam(learning_rate=schedule)


def data(input_shape, loss, n, seed, outputs=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n,) + input_shape).astype(np.float32)
    flat = x.reshape(n, -1)
    s = (flat * np.where(np.arange(flat.shape[1]) % 3 == 0, 1, -1)).sum(axis=1)
    if loss in REGRESSION:
        return x, np.stack([np.tanh(s), 0.5 * s], axis=1).astype(np.float32)
    if loss == "binary_crossentropy":
        if outputs == 1:
            return x, (s > 0).astype(np.int64)  # 0/1 integer labels, as Keras scripts pass them
        return x, np.stack([s > 0, flat[:, 0] > flat[:, 1], flat[:, 2] > 0], axis=1).astype(np.float32)
    return x, np.digitize(s, [-0.5, 0.5]).astype(np.int64)


@pytest.mark.parametrize("name,layers,input_shape,loss_name", KINDS, ids=[k[0] for k in KINDS])
def test_every_kind_round_trips_through_python(runtime, tmp_path, name, layers, input_shape, loss_name):
    outputs = layers()[-1].units
    x, y = data(input_shape, loss_name, 240, 1, outputs)
    xt, yt = data(input_shape, loss_name, 60, 2, outputs)
    regression = loss_name in REGRESSION
    model = anycl.Sequential(layers(), input_shape=input_shape)
    model.compile(optimizer=adam_with_warmup(), loss=loss_name)
    ck = tmp_path / "ck"
    history = model.fit(x, y, epochs=2, batch_size=32, validation_data=(xt, yt), checkpoint_dir=str(ck),
                        runtime=runtime)
    assert len(history.history["val_loss"]) == 2 and np.isfinite(history.history["val_loss"]).all()
    # Keras' rate at each epoch's last step (7: inside the warm-up, 0.002·7/10; 15: 5 of 8 decay steps)
    decayed = 0.002 * ((1 - 0.1) * 0.5 * (1 + np.cos(np.pi * 5 / 8)) + 0.1)
    assert history.history["learning_rate"] == pytest.approx([0.002 * 7 / 10, decayed], rel=1e-6)
    assert (ck / "checkpoint.anyclckpt").is_file()

    path = str(tmp_path / "m.anycl")
    model.save(path)
    loaded = anycl.load_model(path)
    assert loaded.loss == ANYCL_LOSS.get(loss_name, loss_name)
    a, b = model.predict(xt, runtime=runtime), loaded.predict(xt, batch_size=7, runtime=runtime)
    assert a.shape == (60, outputs)
    assert a.tobytes() == b.tobytes()

    # Resume (Keras' BackupAndRestore): a fit that a crash in a callback ends after epoch 1 leaves its
    # backup; a new model's fit with the same callback continues that run to epoch 2 (its History holds
    # that epoch alone), predicts as the uninterrupted model does, bit for bit, and deletes the backup.
    backup = tmp_path / "backup"

    class Crash(anycl.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise RuntimeError("simulated crash")

    def fit_with(callbacks):
        m = anycl.Sequential(layers(), input_shape=input_shape)
        m.compile(optimizer=adam_with_warmup(), loss=loss_name)
        return m, m.fit(x, y, epochs=2, batch_size=32, validation_data=(xt, yt), callbacks=callbacks,
                        runtime=runtime)

    with pytest.raises(RuntimeError, match="simulated crash"):
        fit_with([anycl.callbacks.BackupAndRestore(backup), Crash()])
    assert (backup / "checkpoint.anyclckpt").is_file()
    restore = anycl.callbacks.BackupAndRestore(backup)
    resumed, resumed_history = fit_with([restore])
    assert restore.restored and len(resumed_history.history["loss"]) == 1
    assert resumed.predict(xt, runtime=runtime).tobytes() == a.tobytes()
    assert not (backup / "checkpoint.anyclckpt").exists()

    result = loaded.evaluate(xt, yt, runtime=runtime)
    assert isinstance(result, list) and len(result) == 2 and result == model.evaluate(xt, yt, runtime=runtime)
    assert loaded.metrics_names == ["loss", "mae" if regression else "accuracy"]
    as_dict = loaded.evaluate(xt, yt, return_dict=True, runtime=runtime)
    assert list(as_dict) == loaded.metrics_names and list(as_dict.values()) == result
    loss, metric = result
    if regression:
        err = (a - yt).astype(np.float64)
        want = {"mse": np.mean(err**2), "mean_absolute_error": np.mean(np.abs(err)),
                "huber": np.mean(np.where(np.abs(err) <= 1, 0.5 * err**2, np.abs(err) - 0.5))}[loss_name]
        assert loss == pytest.approx(float(want), rel=1e-4)
        assert metric == pytest.approx(float(np.mean(np.abs(err))), rel=1e-4)
    elif loss_name == "binary_crossentropy":  # predict gives probabilities: Keras' loss and binary accuracy
        t = yt.reshape(60, -1).astype(np.float64)
        p = a.astype(np.float64)
        assert ((p > 0) & (p < 1)).all()
        assert loss == pytest.approx(float(np.mean(-(t * np.log(p) + (1 - t) * np.log1p(-p)))), rel=1e-4)
        assert metric == pytest.approx(float(np.mean((p > 0.5) == t)), abs=1e-6)
    else:
        assert 0 <= metric <= 1 and loss > 0


def test_a_sigmoid_output_goes_with_binary_crossentropy():
    with pytest.raises(anycl.InvalidArgumentError, match="binary_crossentropy"):
        anycl.Sequential([Dense(4), Dense(1, activation="sigmoid")], input_shape=(8,)).compile(loss="mse")
    with pytest.raises(anycl.InvalidArgumentError, match="sparse_categorical_crossentropy"):
        anycl.Sequential([Dense(4), Dense(3, activation="softmax")], input_shape=(8,)).compile(
            loss="binary_crossentropy")


def test_evaluate_speaks_keras_and_never_names_cpp_calls(runtime):
    x, y = data((8,), "mse", 64, 3)
    model = anycl.Sequential([Dense(4), Dense(2)], input_shape=(8,)).compile(loss="mse")
    model.fit(x, y, epochs=1, runtime=runtime)
    labels = np.zeros(64, dtype=np.int64)
    with pytest.raises(anycl.Error) as e:
        model.evaluate(x, labels, runtime=runtime)
    assert "predict_outputs" not in str(e.value)


def test_compile_on_a_loaded_model_keeps_its_weights_and_takes_a_new_optimizer(runtime, tmp_path):
    x, y = data((8,), "sparse_categorical_crossentropy", 128, 4)
    model = anycl.Sequential([Dense(8), Dense(3)], input_shape=(8,)).compile(optimizer="adam")
    model.fit(x, y, epochs=1, runtime=runtime)
    path = str(tmp_path / "m.anycl")
    model.save(path)
    loaded = anycl.load_model(path)
    assert loaded.compile(optimizer="sgd", learning_rate=0.0) is loaded
    assert loaded.predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()
    loaded.fit(x, y, epochs=1, runtime=runtime)  # trains on from the loaded weights
    with pytest.raises(anycl.InvalidArgumentError, match="cannot change the loss"):
        anycl.load_model(path).compile(loss="mse")


def test_hidden_layers_take_their_own_keras_activations(runtime):
    model = anycl.Sequential([Dense(32, activation="tanh"), Dense(16, activation="relu"), Dense(3)],
                             input_shape=(8,)).compile()
    summary = model.summary_text()
    assert "tanh" in summary and "relu" in summary
    conv = anycl.Sequential([Conv2D(4, 3, activation="sigmoid"), Flatten(), Dense(3)], input_shape=(1, 8, 8))
    assert "sigmoid" in conv.compile().summary_text()
    with pytest.raises(anycl.InvalidArgumentError, match="activation must be one of"):
        Dense(4, activation="swish")
    with pytest.raises(anycl.InvalidArgumentError, match="softmax"):
        anycl.Sequential([Dense(4, activation="softmax"), Dense(3)], input_shape=(8,))


def test_leaky_relu_elu_and_gelu_layers_train_save_and_reload_bit_equal(runtime, tmp_path):
    # Keras' activation names on Dense and Conv2D: leaky_relu (slope 0.2), elu (alpha 1), gelu (exact).
    x, y = data((1, 6, 6), "sparse_categorical_crossentropy", 96, 11)
    model = anycl.Sequential([Conv2D(4, 3, activation="gelu"), Flatten(), Dense(16, activation="leaky_relu"),
                              Dense(8, activation="elu"), Dense(3)], input_shape=(1, 6, 6)).compile(optimizer="adam")
    summary = model.summary_text()
    assert "gelu" in summary and "leaky_relu" in summary and "elu" in summary
    history = model.fit(x, y, epochs=3, batch_size=32, runtime=runtime)
    assert history.history["loss"][-1] < history.history["loss"][0]
    path = str(tmp_path / "act.anycl")
    model.save(path)
    again = anycl.load_model(path)
    assert again.predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()


def test_keras_activation_layers_join_the_layer_before(runtime):
    from anycl.layers import ELU, Activation, Dropout, LeakyReLU, ReLU
    keras_style = anycl.Sequential([Conv2D(4, 3), ELU(), Flatten(), Dense(16), LeakyReLU(negative_slope=0.2),
                                    Dense(8), Activation("gelu"), Dense(4), ReLU(), Dense(1), Activation("sigmoid")],
                                   input_shape=(1, 6, 6))
    fused = anycl.Sequential([Conv2D(4, 3, activation="elu"), Flatten(), Dense(16, activation="leaky_relu"),
                              Dense(8, activation="gelu"), Dense(4, activation="relu"),
                              Dense(1, activation="sigmoid")], input_shape=(1, 6, 6))
    assert keras_style._layers == fused._layers and keras_style.outputs == 1
    x, _ = data((1, 6, 6), "sparse_categorical_crossentropy", 64, 12)
    y = (x.reshape(64, -1).sum(axis=1) > 0).astype(np.int64)
    keras_style.compile(optimizer="adam", loss="binary_crossentropy").fit(x, y, epochs=1, runtime=runtime)
    with pytest.raises(anycl.InvalidArgumentError, match="slope 0.2"):
        LeakyReLU(negative_slope=0.3)
    with pytest.raises(anycl.InvalidArgumentError, match="must follow a Dense, Conv2D or BatchNormalization"):
        anycl.Sequential([Dense(8), Dropout(0.1), LeakyReLU(), Dense(2)], input_shape=(4,))
    with pytest.raises(anycl.InvalidArgumentError, match="must follow a Dense, Conv2D or BatchNormalization"):
        anycl.Sequential([Dense(8, activation="tanh"), LeakyReLU(), Dense(2)], input_shape=(4,))


def test_an_exception_in_a_callback_stops_training_and_propagates_from_fit(runtime):
    x, y = data((8,), "sparse_categorical_crossentropy", 256, 5)

    class Broken(anycl.Callback):
        def __init__(self):
            self.epochs = []

        def on_epoch_end(self, epoch, logs):
            self.epochs.append(epoch)
            raise ZeroDivisionError("a bug in the user's callback")

    model = anycl.Sequential([Dense(8), Dense(3)], input_shape=(8,)).compile()
    broken = Broken()
    with pytest.raises(ZeroDivisionError, match="a bug in the user's callback"):
        model.fit(x, y, epochs=5, batch_size=32, callbacks=[broken], runtime=runtime)
    assert broken.epochs == [1]  # stopped: no second epoch
    assert model.predict(x[:2], runtime=runtime).shape == (2, 3)  # the weights reached are kept


def test_get_and_set_weights_speak_keras_layout(runtime):
    model = anycl.Sequential([Conv2D(2, 3, activation="relu"), Flatten(), Dense(4, activation="relu"), Dense(3)],
                             input_shape=(1, 5, 5)).compile()
    x, y = data((1, 5, 5), "sparse_categorical_crossentropy", 64, 6)
    model.fit(x, y, epochs=1, runtime=runtime)
    weights = model.get_weights()
    assert [w.shape for w in weights] == [(3, 3, 1, 2), (2,), (18, 4), (4,), (4, 3), (3,)]
    assert all(w.dtype == np.float32 for w in weights)

    # A numpy forward pass with Keras' layout gives anycl's logits (the softmax is in predict).
    k, b = weights[0], weights[1]
    conv = np.zeros((len(x), 2, 3, 3), dtype=np.float32)
    for i in range(3):
        for j in range(3):
            patch = x[:, 0, i:i + 3, j:j + 3]
            conv[:, :, i, j] = np.einsum("nab,abf->nf", patch, k[:, :, 0, :]) + b
    h = np.maximum(conv, 0).reshape(len(x), -1)
    h = np.maximum(h @ weights[2] + weights[3], 0)
    logits = h @ weights[4] + weights[5]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict(x, runtime=runtime), p / p.sum(axis=1, keepdims=True), atol=1e-5)

    # set_weights round-trips and takes effect; a fresh model takes weights before any fit.
    fresh = anycl.Sequential([Conv2D(2, 3, activation="relu"), Flatten(), Dense(4, activation="relu"), Dense(3)],
                             input_shape=(1, 5, 5)).compile()
    fresh.set_weights(weights)
    assert all((a == b).all() for a, b in zip(fresh.get_weights(), weights))
    assert fresh.predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()
    with pytest.raises(anycl.ShapeError, match="array 0 has shape"):
        fresh.set_weights([w.T for w in weights])
    with pytest.raises(anycl.ShapeError, match="6 weight arrays"):
        fresh.set_weights(weights[:2])
    bad = [w.copy() for w in weights]
    bad[1][0] = np.nan
    with pytest.raises(anycl.InvalidArgumentError, match="finite"):
        fresh.set_weights(bad)


def test_channels_last_images_are_refused_unless_the_model_says_so(runtime):
    rng = np.random.default_rng(7)
    nchw = rng.uniform(0, 1, size=(32, 3, 8, 8)).astype(np.float32)
    nhwc = np.ascontiguousarray(nchw.transpose(0, 2, 3, 1))
    y = np.arange(32) % 2
    model = anycl.Sequential([Conv2D(2, 3), Flatten(), Dense(2)], input_shape=(3, 8, 8)).compile()
    with pytest.raises(anycl.ShapeError, match=r"transpose\(0, 3, 1, 2\)"):
        model.fit(nhwc, y, epochs=1, runtime=runtime)
    model.fit(nchw, y, epochs=1, runtime=runtime)
    with pytest.raises(anycl.ShapeError, match="channels_last"):
        model.predict(nhwc, runtime=runtime)

    keras_style = anycl.Sequential([Conv2D(2, 3), Flatten(), Dense(2)], input_shape=(8, 8, 3),
                                   data_format="channels_last").compile()
    keras_style.set_weights(model.get_weights())
    assert keras_style.predict(nhwc, runtime=runtime).tobytes() == model.predict(nchw, runtime=runtime).tobytes()
    with pytest.raises(anycl.ShapeError, match=r"\(samples, 8, 8, 3\)"):
        keras_style.predict(nchw, runtime=runtime)


def test_the_example_in_docs_python_md_runs(runtime, tmp_path, monkeypatch):
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "..", "..", "docs", "python.md"), encoding="utf-8").read()
    start = text.index("```python\nimport numpy") + len("```python\n")
    monkeypatch.chdir(tmp_path)
    exec(compile(text[start:text.index("```", start)], "docs/python.md", "exec"), {})


def test_a_file_that_cannot_be_written_is_an_io_error(runtime, tmp_path):
    model = anycl.Sequential([Dense(4), Dense(2)], input_shape=(3,)).compile()
    model.set_weights([np.zeros((3, 4), np.float32), np.zeros(4, np.float32), np.zeros((4, 2), np.float32),
                       np.zeros(2, np.float32)])
    with pytest.raises(anycl.IoError, match="choose another path") as e:
        model.save(str(tmp_path))  # a folder, not a file
    assert isinstance(e.value, OSError)
    with pytest.raises(anycl.IoError, match="does not exist"):
        model.save(str(tmp_path / "missing" / "m.anycl"))


def test_predict_takes_keras_batch_size(runtime):
    x, y = data((8,), "sparse_categorical_crossentropy", 64, 8)
    model = anycl.Sequential([Dense(4), Dense(3)], input_shape=(8,)).compile()
    model.fit(x, y, epochs=1, runtime=runtime)
    assert model.predict(x, batch_size=5, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()
    with pytest.raises(anycl.InvalidArgumentError, match="batch_size"):
        model.predict(x, batch_size=0, runtime=runtime)


def test_a_loaded_image_model_still_refuses_channels_last_arrays(runtime, tmp_path):
    rng = np.random.default_rng(9)
    x = rng.uniform(0, 1, size=(16, 3, 8, 8)).astype(np.float32)
    model = anycl.Sequential([Conv2D(2, 3), Flatten(), Dense(2)], input_shape=(3, 8, 8)).compile()
    model.fit(x, np.arange(16) % 2, epochs=1, runtime=runtime)
    model.save(str(tmp_path / "cnn.anycl"))
    loaded = anycl.load_model(str(tmp_path / "cnn.anycl"))
    assert loaded.input_shape == (3, 8, 8)
    with pytest.raises(anycl.ShapeError, match="channels last"):
        loaded.predict(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), runtime=runtime)
    assert loaded.predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()


def test_compiling_again_keeps_the_weights_reached(runtime):
    x, y = data((8,), "sparse_categorical_crossentropy", 64, 10)
    model = anycl.Sequential([Dense(4), Dense(3)], input_shape=(8,)).compile(optimizer="adam")
    model.fit(x, y, epochs=1, runtime=runtime)
    before = model.get_weights()
    model.compile(optimizer="sgd", learning_rate=0.01)
    assert all((a == b).all() for a, b in zip(model.get_weights(), before))


def test_a_bad_device_spec_from_the_environment_says_it_came_from_there(runtime, monkeypatch):
    monkeypatch.setenv("ANYCL_DEVICE", "nosuch")
    with pytest.raises(anycl.DeviceError, match=r"the device spec taken from \$ANYCL_DEVICE") as caught:
        anycl.Runtime()
    assert "unset ANYCL_DEVICE" in str(caught.value)
    with pytest.raises(anycl.DeviceError) as caught:
        anycl.Runtime("nosuch")  # the caller's own spec: not blamed on the environment
    assert "ANYCL_DEVICE" not in str(caught.value)
