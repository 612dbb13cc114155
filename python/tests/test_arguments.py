# Arguments are exact (docs/guarantees.md, "Arguments"): integers are checked, never wrapped or
# truncated; validation_data wins over validation_split as in Keras; layer-object models refuse
# model-wide activation=/dropout=; paths with NUL are refused; Runtime(0) is device 0; every
# message names the argument as the caller wrote it.
import numpy as np
import pytest

import anycl
from anycl.layers import Dense

from test_threads import circle


def compiled():
    return anycl.Sequential("16", input_shape=(2,), outputs=2, dropout=0.0).compile(optimizer="adam")


@pytest.mark.parametrize("arguments, words", [
    (dict(seed=-1), "seed = -1"), (dict(seed=2 ** 64 + 1), "seed = 18446744073709551617"), (dict(seed=1.5), "seed"),
    (dict(epochs=2.9), "epochs must be an integer"), (dict(epochs=-1), "epochs = -1"), (dict(epochs=0), "epochs = 0"),
    (dict(batch_size=-1), "batch_size = -1"), (dict(batch_size=0), "batch_size = 0"),
    (dict(validation_split=1.5), "validation_split"), (dict(checkpoint_dir="ck\0pt"), "checkpoint_dir"),
])
def test_fit_refuses_arguments_that_would_wrap_or_truncate(runtime, arguments, words):
    x, y = circle()
    with pytest.raises(anycl.InvalidArgumentError, match=words):
        compiled().fit(x, y, runtime=runtime, **arguments)


def test_seed_at_the_top_of_its_range_trains(runtime):
    x, y = circle()
    assert len(compiled().fit(x, y, epochs=1, seed=2 ** 64 - 1, runtime=runtime).history["loss"]) == 1


def test_validation_data_wins_over_validation_split(runtime):
    x, y = circle()
    xv, yv = x[:100], y[:100]
    both = compiled().fit(x, y, epochs=2, validation_split=0.25, validation_data=(xv, yv), runtime=runtime)
    data_only = compiled().fit(x, y, epochs=2, validation_data=(xv, yv), runtime=runtime)
    assert both.history["val_loss"] == data_only.history["val_loss"]
    assert both.history["loss"] == data_only.history["loss"]


def test_bad_validation_data_is_named_as_such(runtime):
    x, y = circle()
    with pytest.raises(anycl.ShapeError, match="^validation_data: "):
        compiled().fit(x, y, validation_data=(x[:10, :1], y[:10]), runtime=runtime)


def test_many_epochs_are_no_allocation(runtime):
    x, y = circle()

    class StopAtOne(anycl.Callback):
        def on_epoch_end(self, epoch, logs):
            return True

    history = compiled().fit(x, y, epochs=10 ** 12, callbacks=[StopAtOne()], runtime=runtime)
    assert len(history.history["loss"]) == 1


@pytest.mark.parametrize("arguments, error, words", [
    (dict(input_shape=(-8,)), anycl.InvalidArgumentError, r"input_shape\[0\] = -8"),
    (dict(input_shape=(2 ** 64 + 8,)), anycl.InvalidArgumentError, r"input_shape\[0\]"),
    (dict(input_shape=(2.5,)), anycl.InvalidArgumentError, r"input_shape\[0\] must be an integer"),
    (dict(input_shape=8), anycl.ShapeError, r"input_shape=\(8,\)"),
    (dict(input_shape=(2,), outputs=2 ** 64 + 2), anycl.InvalidArgumentError, "outputs = "),
    (dict(input_shape=(2,), outputs=-1), anycl.InvalidArgumentError, "outputs = -1"),
])
def test_model_sizes_are_exact(arguments, error, words):
    arguments.setdefault("outputs", 2)
    with pytest.raises(error, match=words):
        anycl.Sequential("16", **arguments)


@pytest.mark.parametrize("extra", [dict(activation="tanh"), dict(dropout=0.5), dict(outputs=3)])
def test_layer_objects_refuse_model_wide_options(extra):
    with pytest.raises(anycl.InvalidArgumentError, match="from the layers"):
        anycl.Sequential([Dense(16), Dense(2)], input_shape=(2,), **extra)


def test_compile_refuses_an_optimizer_that_is_no_name():
    with pytest.raises(anycl.InvalidArgumentError, match="optimizer must be a name"):
        anycl.Sequential("16", input_shape=(2,), outputs=2).compile(optimizer=None)


def test_paths_with_nul_are_refused(runtime, tmp_path):
    x, y = circle()
    model = compiled()
    model.fit(x, y, epochs=1, runtime=runtime)
    for call in (model.save, model.export_onnx, anycl.load_model):
        with pytest.raises(anycl.InvalidArgumentError, match="NUL"):
            call(str(tmp_path / "model\0.anycl"))
    assert not (tmp_path / "model").exists()


def test_predict_names_a_non_finite_value_by_its_full_index(runtime):
    x, y = circle()
    model = compiled()
    model.fit(x, y, epochs=1, runtime=runtime)
    bad = x[:5].copy()
    bad[2, 1] = np.nan
    with pytest.raises(anycl.InvalidArgumentError, match=r"x\[2, 1\] is nan"):
        model.predict(bad, runtime=runtime)


def test_runtime_takes_a_device_index():
    try:
        devices = anycl.devices()
    except anycl.DeviceError as e:
        pytest.skip(f"no OpenCL device: {e}")
    assert anycl.Runtime(0).device_name == devices[0]["name"]
    with pytest.raises(anycl.DeviceError):
        anycl.Runtime(len(devices))
    with pytest.raises(anycl.InvalidArgumentError, match="device"):
        anycl.Runtime(-1)
    with pytest.raises(anycl.InvalidArgumentError, match="device must be an index"):
        anycl.Runtime(1.5)


def test_non_square_kernels_pools_and_strides_are_refused_not_squared():
    # Conv2D(4, kernel_size=(3, 5)) once built a 3x3 kernel and MaxPool2D((2, 3)) a 2x2 pool, silently.
    from anycl.layers import Conv2D, MaxPool2D
    assert Conv2D(4, (3, 3)).token == Conv2D(4, 3).token == "conv4x3"
    assert MaxPool2D((2, 2)).token == MaxPool2D(2).token == MaxPool2D(2, strides=2).token == "pool2"
    assert MaxPool2D(3, strides=2).token == MaxPool2D(pool_size=(3, 3), strides=(2, 2)).token == "pool3s2"
    with pytest.raises(anycl.InvalidArgumentError, match="valid padding only"):
        MaxPool2D(2, padding="same")
    for make, argument in ((lambda: Conv2D(4, kernel_size=(3, 5)), "kernel_size"),
                           (lambda: Conv2D(4, 3, strides=(1, 2)), "strides"),
                           (lambda: MaxPool2D((2, 3)), "pool_size"),
                           (lambda: MaxPool2D(2, strides=(1, 2)), "strides")):
        with pytest.raises(anycl.InvalidArgumentError, match=f"{argument}=.* is not square"):
            make()
    for bad in (0, -3, 2.5, True, (3, 3, 3), "3"):
        with pytest.raises(anycl.InvalidArgumentError, match="kernel_size must be a positive integer"):
            Conv2D(4, bad)
    with pytest.raises(anycl.InvalidArgumentError, match="filters must be a positive integer"):
        Conv2D(0, 3)
