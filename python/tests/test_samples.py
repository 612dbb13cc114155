"""The Python samples run as a user runs them (a child Python, this build's package), shortened by their
own flags, so they cannot rot: the tabular binary classifier on scikit-learn's breast cancer data
and the BatchNorm CNN on a small MNIST-format folder written here."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import anycl

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "python"


def run_sample(name, *args, cwd):
    # the package under test and its library, as absolute paths (the sample runs in `cwd`)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(anycl.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    if env.get("ANYCL_LIBRARY"):
        env["ANYCL_LIBRARY"] = os.path.abspath(env["ANYCL_LIBRARY"])
    r = subprocess.run([sys.executable, str(SAMPLES / name), *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_breast_cancer_binary_sample_trains_evaluates_and_reloads(runtime, tmp_path):
    try:
        import sklearn  # noqa: F401  (the sample's data ships inside scikit-learn)
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("no scikit-learn in this Python (tools/setup.sh installs it into build/onnx-venv)")
    model = tmp_path / "bc.anycl"
    out = run_sample("breast_cancer_binary.py", "--epochs", "20", "--save", str(model), cwd=tmp_path)
    assert model.is_file()
    accuracy = float(out.split("Test accuracy:")[1].split()[0])
    assert accuracy > 0.85, out  # a standardised breast cancer set is easy: about 0.95 after 20 epochs
    assert "the loaded model's accuracy" in out


def write_idx(path, array):
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(header + array.tobytes())


def test_fashion_bn_cnn_sample_runs_on_a_small_folder(runtime, tmp_path):
    rng = np.random.default_rng(5)
    for stem, n in (("train", 256), ("t10k", 64)):
        labels = rng.integers(0, 10, size=n)
        images = rng.integers(0, 60, size=(n, 28, 28))
        images[np.arange(n), labels * 2 + 4, :] = 255  # a bright row that tells the class
        write_idx(tmp_path / f"{stem}-images-idx3-ubyte", images)
        write_idx(tmp_path / f"{stem}-labels-idx1-ubyte", labels)
    out = run_sample("fashion_bn_cnn.py", str(tmp_path), "--epochs", "1", cwd=tmp_path)
    assert "BatchNormalization" in out and "GlobalAveragePooling2D" in out
    assert "Test accuracy:" in out


def test_first_prediction_sample_loads_a_saved_model_and_predicts(runtime, tmp_path):
    model = anycl.Sequential("8", input_shape=(6,), outputs=3, dropout=0.0)
    model.compile(optimizer="adam")
    x = np.random.default_rng(1).uniform(-1, 1, (64, 6)).astype(np.float32)
    model.fit(x, (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0), epochs=1, batch_size=16, runtime=runtime)
    path = tmp_path / "small.anycl"
    model.save(str(path))
    out = run_sample("first_prediction.py", str(path), cwd=tmp_path)
    assert "first result" in out and "output shape (1, 3)" in out
