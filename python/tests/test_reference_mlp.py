# The reference MLP trained from Python equals `anycl train` with the same data, flags and seed:
# same library, same kernels, same initialisation, dropout stream and shuffles, so the per-epoch
# losses agree and the saved model files are byte-identical (the weights are bit-identical).
import csv
import os
import subprocess

import pytest

import anycl
from anycl.layers import Dense, Dropout
from conftest import anycl_cli

LIMIT, EPOCHS = 1024, 2


def test_python_fit_is_bit_identical_to_anycl_train(runtime, tmp_path):
    try:
        (x, y), _ = anycl.datasets.load_data()
    except anycl.DataError as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no MNIST-format data set: {e}")
    cli_model, metrics = tmp_path / "cli.anycl", tmp_path / "cli.csv"
    subprocess.run([anycl_cli(), "train", "--limit", str(LIMIT), "--epochs", str(EPOCHS), "--seed", "7",
                    "--save", str(cli_model), "--metrics", str(metrics), "--quiet"], check=True)
    with open(metrics) as f:
        cli_losses = [float(row["train_loss"]) for row in csv.DictReader(f)]

    model = anycl.Sequential([Dense(512, activation="relu"), Dropout(0.2), Dense(512, activation="relu"), Dropout(0.2),
                              Dense(10)], input_shape=(784,))
    model.compile(optimizer="rmsprop")
    history = model.fit(x[:LIMIT].reshape(LIMIT, 784), y[:LIMIT], epochs=EPOCHS, batch_size=128, seed=7,
                        runtime=runtime)
    assert [f"{v:.6f}" for v in history.history["loss"]] == [f"{v:.6f}" for v in cli_losses]
    py_model = tmp_path / "py.anycl"
    model.save(py_model)
    assert py_model.read_bytes() == cli_model.read_bytes()
