"""Issue 46's target: a Keras user's script runs on anycl after changing only its import lines (and the
image shape to channels first, or naming data_format="channels_last"). The scripts below are written
as classic Keras examples — an MLP and a CNN on MNIST — for `keras`; the test makes each one anycl's by
rewriting its import lines alone, checks that nothing else changed, and runs it as a user would (a
child Python, this build's package) on a small MNIST-format folder: it must finish and print a test
accuracy above chance."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import anycl

MLP = '''
import keras
from keras.datasets import mnist
from keras.layers import Dense, Dropout
from keras.optimizers import RMSprop
from keras.utils import to_categorical

batch_size = 32
num_classes = 10
epochs = 1

(x_train, y_train), (x_test, y_test) = mnist.load_data()
x_train = x_train.reshape(len(x_train), 784).astype("float32") / 255
x_test = x_test.reshape(len(x_test), 784).astype("float32") / 255
print(x_train.shape[0], "train samples,", x_test.shape[0], "test samples")

# one-hot class vectors for the categorical cross-entropy
y_train = to_categorical(y_train, num_classes)
y_test = to_categorical(y_test, num_classes)

model = keras.Sequential()
model.add(Dense(512, activation="relu", input_shape=(784,)))
model.add(Dropout(0.2))
model.add(Dense(512, activation="relu"))
model.add(Dropout(0.2))
model.add(Dense(num_classes, activation="softmax"))
model.summary()

model.compile(loss="categorical_crossentropy", optimizer=RMSprop(), metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=1,
                    validation_data=(x_test, y_test))
score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
'''

CNN = '''
import keras
from keras import layers
from keras.datasets import mnist

batch_size = 32
num_classes = 10
epochs = 1
rows, cols = 28, 28

(x_train, y_train), (x_test, y_test) = mnist.load_data()
x_train = x_train.reshape(x_train.shape[0], {image}).astype("float32") / 255
x_test = x_test.reshape(x_test.shape[0], {image}).astype("float32") / 255
input_shape = ({image})

y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

model = keras.Sequential()
model.add(layers.Conv2D(32, kernel_size=(3, 3), activation="relu", input_shape=input_shape{data_format}))
model.add(layers.Conv2D(64, (3, 3), activation="relu"))
model.add(layers.MaxPooling2D(pool_size=(2, 2)))
model.add(layers.Dropout(0.25))
model.add(layers.Flatten())
model.add(layers.Dense(128, activation="relu"))
model.add(layers.Dropout(0.5))
model.add(layers.Dense(num_classes, activation="softmax"))

model.compile(loss="categorical_crossentropy", optimizer=keras.optimizers.Adam(), metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=1, validation_data=(x_test, y_test))
score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
'''
CNN_CHANNELS_FIRST = CNN.format(image="1, rows, cols", data_format="")
CNN_CHANNELS_LAST = CNN.format(image="rows, cols, 1", data_format=', data_format="channels_last"')


def for_anycl(keras_script):
    """The script with its import lines pointed at anycl — the one change a user makes."""
    lines = []
    for line in keras_script.splitlines():
        if line == "import keras":
            line = "import anycl as keras"
        elif line.startswith("from keras"):
            line = "from anycl" + line[len("from keras"):]
        lines.append(line)
    return "\n".join(lines) + "\n"


def changed_lines(a, b):
    return [(x, y) for x, y in zip(a.splitlines(), b.splitlines()) if x != y]


def write_idx(path, array):
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(header + array.tobytes())


@pytest.fixture(scope="module")
def mnist_folder(tmp_path_factory):
    """A small MNIST-format folder whose classes can be learnt in one short epoch: each image has a
    bright row at a height that tells its class, over noise."""
    folder = tmp_path_factory.mktemp("mnist")
    rng = np.random.default_rng(46)
    for stem, n in (("train", 768), ("t10k", 192)):
        labels = rng.integers(0, 10, size=n)
        images = rng.integers(0, 80, size=(n, 28, 28))
        images[np.arange(n), labels * 2 + 4, :] = 255
        write_idx(folder / f"{stem}-images-idx3-ubyte", images)
        write_idx(folder / f"{stem}-labels-idx1-ubyte", labels)
    return folder


def run_script(text, folder, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(text)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(anycl.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    if env.get("ANYCL_LIBRARY"):
        env["ANYCL_LIBRARY"] = os.path.abspath(env["ANYCL_LIBRARY"])
    env["ANYCL_DATA"] = str(folder)  # where mnist.load_data() reads (anycl downloads nothing)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"the script failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_only_the_import_lines_change():
    for script in (MLP, CNN_CHANNELS_FIRST, CNN_CHANNELS_LAST):
        ported = for_anycl(script)
        changes = changed_lines(script, ported)
        assert changes and all(k.startswith(("import keras", "from keras")) for k, _ in changes)
        assert "keras" not in "".join(a for _, a in changes).replace("import anycl as keras", "")


SCRIPTS = {"mlp": MLP, "cnn channels first": CNN_CHANNELS_FIRST, "cnn channels last": CNN_CHANNELS_LAST}


@pytest.fixture(scope="module")
def outputs(mnist_folder, tmp_path_factory):
    """Each ported script's output, run once (a dict filled as the tests ask)."""
    ran = {}

    def output(name):
        if name not in ran:
            ran[name] = run_script(for_anycl(SCRIPTS[name]), mnist_folder, tmp_path_factory.mktemp("run"))
        return ran[name]
    return output


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_keras_script_runs_after_changing_its_imports(runtime, outputs, name):
    out = outputs(name)
    assert "Epoch 1/1" in out, out  # fit(verbose=1): Keras' progress bar
    accuracy = float(out.split("Test accuracy:")[1].split()[0])
    assert accuracy > 0.3, out  # chance is 0.1; the bright row makes the classes easy to learn


def test_the_mlp_script_reads_the_folder_as_keras_mnist(runtime, outputs):
    assert "768 train samples, 192 test samples" in outputs("mlp")
    # a bare model.summary() prints Keras' table, as in Keras (it returns None)
    assert "Total params: 669,706" in outputs("mlp") and "\nNone\n" not in outputs("mlp")


def test_the_channels_last_script_trains_the_same_model_on_the_same_pixels(runtime, outputs):
    def test_loss(out):
        return out.split("Test loss:")[1].split()[0]
    assert test_loss(outputs("cnn channels last")) == test_loss(outputs("cnn channels first"))


def test_the_keras_scripts_channels_last_shape_without_data_format_is_refused_with_the_fix(
        runtime, mnist_folder, tmp_path):
    # Keras' own default: (rows, cols, 1) and no data_format. anycl's images are channels first, so it
    # says how to port the script instead of training on scrambled pixels.
    keras_default = CNN.format(image="rows, cols, 1", data_format="")
    script = tmp_path / "script.py"
    script.write_text(for_anycl(keras_default))
    env = dict(os.environ, ANYCL_DATA=str(mnist_folder))
    env["PYTHONPATH"] = os.pathsep.join([str(Path(anycl.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode != 0
    assert "pass input_shape=(1, 28, 28)" in r.stderr and "data_format='channels_last'" in r.stderr, r.stderr
