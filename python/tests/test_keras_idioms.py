"""The Keras idioms a classic Keras script uses: Sequential() + add(), the input shape given by the first
layer or an Input, the hint for a channels-last image shape, to_categorical and the categorical
crossentropy on one-hot targets (hard labels only)."""
import pickle

import numpy as np
import pytest

import anycl
from anycl.layers import Conv2D, Dense, Dropout, Flatten, Input, InputLayer, MaxPooling2D
from anycl.optimizers import RMSprop
from anycl.utils import to_categorical


def blobs(n=96, features=8, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, size=n)
    x = rng.normal(size=(n, features)).astype(np.float32)
    x[np.arange(n), labels] += 3.0  # the class is the feature that stands out
    return x, labels


# -- Sequential() + add(), built at compile() --------------------------------------------------------
def test_add_builds_the_same_model_as_the_layer_list():
    added = anycl.Sequential()
    added.add(Dense(16, activation="relu", input_shape=(8,)))
    added.add(Dropout(0.2))
    added.add(Dense(3, activation="softmax"))
    assert added.input_shape is None  # nothing built yet
    listed = anycl.Sequential([Dense(16, activation="relu"), Dropout(0.2), Dense(3, activation="softmax")],
                              input_shape=(8,))
    assert added.summary_text() == listed.summary_text()  # summary() before compile(), as Keras' mnist_mlp calls it
    added.compile(optimizer="adam")
    assert added.input_shape == (8,) and added.outputs == 3
    assert added.summary_text() == listed.compile(optimizer="adam").summary_text()


def test_add_after_a_layer_list_extends_it_until_compile():
    model = anycl.Sequential([Dense(16, activation="relu", input_shape=(8,)), Dense(3)])
    model.add(Dense(4))  # Keras allows it: now the output layer is Dense(4)
    assert model.compile().outputs == 4


def test_add_after_compile_is_refused_saying_what_to_do():
    model = anycl.Sequential([Dense(3)], input_shape=(8,)).compile()
    with pytest.raises(anycl.InvalidArgumentError, match="already built.*new Sequential"):
        model.add(Dense(2))
    with pytest.raises(anycl.InvalidArgumentError, match="--layers string"):
        anycl.Sequential("16", input_shape=(8,), outputs=3).add(Dense(2))
    with pytest.raises(anycl.InvalidArgumentError, match="takes an anycl layer"):
        anycl.Sequential().add("Dense(3)")


def test_compile_of_an_empty_or_incomplete_model_says_what_is_missing():
    with pytest.raises(anycl.InvalidArgumentError, match="no layers"):
        anycl.Sequential().compile()
    model = anycl.Sequential()
    model.add(Dense(3))
    with pytest.raises(anycl.InvalidArgumentError, match="pass input_shape"):
        model.compile()
    model = anycl.Sequential()
    model.add(Dense(16, input_shape=(8,)))
    model.add(Dropout(0.1))
    with pytest.raises(anycl.InvalidArgumentError, match="last layer must be the Dense output layer"):
        model.compile()


def test_the_string_form_and_its_default_layers_work_as_before():
    model = anycl.Sequential(input_shape=(8,), outputs=3).compile()
    assert "512" in model.summary_text()


def test_an_added_model_trains_and_pickles_before_and_after_compile(runtime):
    x, y = blobs()
    model = anycl.Sequential()
    model.add(Input(shape=(8,)))
    model.add(Dense(3))
    again = pickle.loads(pickle.dumps(model)).compile(optimizer="adam")
    assert again.input_shape == (8,)
    model.compile(optimizer="adam")
    model.fit(x, y, epochs=2, batch_size=32, runtime=runtime)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(x, runtime=runtime), model.predict(x, runtime=runtime))


# -- where the input shape comes from ----------------------------------------------------------------
@pytest.mark.parametrize("first", [
    lambda: [Dense(16, activation="relu", input_shape=(8,))],
    lambda: [Dense(16, activation="relu", input_dim=8)],
    lambda: [Input(shape=(8,)), Dense(16, activation="relu")],
    lambda: [InputLayer(input_shape=(8,)), Dense(16, activation="relu")],
    lambda: [anycl.Input(shape=(8,)), Dense(16, activation="relu", input_shape=(8,))],  # the same twice: fine
])
def test_the_input_shape_comes_from_the_first_layer_or_an_input(first):
    assert anycl.Sequential(first() + [Dense(3)]).input_shape == (8,)
    model = anycl.Sequential()
    for layer in first() + [Dense(3)]:
        model.add(layer)
    assert model.compile().input_shape == (8,)


def test_an_image_input_shape_on_the_first_conv2d():
    model = anycl.Sequential([Conv2D(4, kernel_size=(3, 3), activation="relu", input_shape=(1, 8, 8)),
                              MaxPooling2D(pool_size=(2, 2)), Flatten(), Dense(3)])
    assert model.input_shape == (1, 8, 8)


def test_conflicting_input_shapes_are_refused():
    with pytest.raises(anycl.ShapeError, match=r"two input shapes.*\(8,\).*\(9,\)"):
        anycl.Sequential([Dense(3, input_shape=(9,))], input_shape=(8,))
    with pytest.raises(anycl.ShapeError, match="two input shapes"):
        anycl.Sequential([Input(shape=(8,)), Dense(3, input_shape=(9,))])
    model = anycl.Sequential(input_shape=(8,))
    model.add(Dense(3, input_shape=(9,)))
    with pytest.raises(anycl.ShapeError, match="two input shapes"):
        model.compile()
    assert anycl.Sequential([Dense(3, input_shape=(8,))], input_shape=(8,)).input_shape == (8,)  # agreeing


def test_an_input_or_input_shape_past_the_first_layer_is_refused():
    with pytest.raises(anycl.InvalidArgumentError, match="must be the model's first element"):
        anycl.Sequential([Dense(4, input_shape=(8,)), Input(shape=(4,)), Dense(3)])
    model = anycl.Sequential()
    model.add(Dense(4, input_shape=(8,)))
    with pytest.raises(anycl.InvalidArgumentError, match="not the first layer"):
        model.add(Dense(3, input_shape=(4,)))
    with pytest.raises(anycl.InvalidArgumentError, match="input shape once"):
        InputLayer()
    with pytest.raises(anycl.InvalidArgumentError, match="input_shape must be a tuple"):
        Dense(3, input_shape=8)


# -- a channels-last image shape with the default data format ------------------------------------------
@pytest.mark.parametrize("shape", [(28, 28, 1), (32, 32, 3)])
def test_a_channels_last_image_shape_is_refused_with_both_ways_out(shape):
    h, w, c = shape
    with pytest.raises(anycl.ShapeError, match=rf"pass input_shape=\({c}, {h}, {w}\).*data_format='channels_last'"):
        anycl.Sequential([Conv2D(4, 3, input_shape=shape), Flatten(), Dense(3)])
    with pytest.raises(anycl.ShapeError, match="channels-last"):
        anycl.Sequential([Conv2D(4, 3), Flatten(), Dense(3)], input_shape=shape)


def test_a_data_format_said_out_loud_takes_the_shape_as_written():
    last = anycl.Sequential([Conv2D(4, 3, input_shape=(28, 28, 1)), Flatten(), Dense(3)], data_format="channels_last")
    assert last.input_shape == (1, 28, 28) and last.data_format == "channels_last"
    first = anycl.Sequential([Conv2D(4, 3), Flatten(), Dense(3)], input_shape=(32, 32, 3),
                             data_format="channels_first")  # 32 channels of 32×3 images, as said
    assert first.input_shape == (32, 32, 3) and first.data_format == "channels_first"
    assert anycl.Sequential([Dense(3)], input_shape=(8,)).data_format == "channels_first"


# -- to_categorical ------------------------------------------------------------------------------------
def test_to_categorical_is_keras_one_hot_float32():
    y = to_categorical(np.array([0, 2, 1, 2]), num_classes=4)
    assert y.dtype == np.float32 and y.shape == (4, 4)
    np.testing.assert_array_equal(y, np.eye(4, dtype=np.float32)[[0, 2, 1, 2]])
    assert to_categorical([1, 0, 3]).shape == (3, 4)  # num_classes: the largest label + 1
    assert to_categorical(np.array([[1], [0]]), 2).shape == (2, 2)  # (n, 1) labels, as Keras squeezes them


def test_to_categorical_refuses_labels_it_cannot_encode():
    with pytest.raises(anycl.InvalidArgumentError, match=r"not in \[0, 3\).*num_classes=4"):
        to_categorical([0, 3], 3)
    with pytest.raises(anycl.InvalidArgumentError, match="0 or more"):
        to_categorical([-1, 0], 3)
    with pytest.raises(anycl.InvalidArgumentError, match="whole numbers"):
        to_categorical([0.5, 1.0], 3)


# -- categorical_crossentropy: one-hot targets trained as their labels -----------------------------------
def test_categorical_crossentropy_on_one_hot_trains_as_the_sparse_loss_on_labels(runtime):
    x, labels = blobs()

    def trained(loss, y):
        model = anycl.Sequential()
        model.add(Dense(8, activation="relu", input_shape=(8,)))
        model.add(Dense(3, activation="softmax"))
        model.compile(loss=loss, optimizer=RMSprop(learning_rate=0.01), metrics=["accuracy"])
        history = model.fit(x, y, epochs=10, batch_size=32, validation_data=(x, y), runtime=runtime)
        return model, history

    one_hot, history = trained("categorical_crossentropy", to_categorical(labels, 3))
    sparse, sparse_history = trained("sparse_categorical_crossentropy", labels)
    assert history.history == sparse_history.history  # the same training, bit for bit
    assert one_hot.evaluate(x, to_categorical(labels, 3), runtime=runtime) == sparse.evaluate(x, labels,
                                                                                           runtime=runtime)
    probabilities = one_hot.predict(x, runtime=runtime)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
    assert one_hot.evaluate(x, to_categorical(labels, 3), runtime=runtime)[1] > 0.5  # it learnt: 3 classes


@pytest.mark.parametrize("metric", ["accuracy", "acc", "categorical_accuracy"])
def test_the_categorical_metric_takes_the_name_keras_gives_it(metric):
    model = anycl.Sequential([Dense(3)], input_shape=(8,)).compile(loss="categorical_crossentropy", metrics=[metric])
    assert model.metrics_names == ["loss", metric]


def test_soft_or_smoothed_targets_are_refused_as_not_hard_labels(runtime):
    x, labels = blobs(n=8)
    model = anycl.Sequential([Dense(3)], input_shape=(8,)).compile(loss="categorical_crossentropy")
    smoothed = to_categorical(labels, 3) * 0.9 + 0.1 / 3
    with pytest.raises(anycl.InvalidArgumentError, match=r"y\[0\].*not one-hot.*hard labels.*sparse_categorical"):
        model.fit(x, smoothed, runtime=runtime)
    two_ones = to_categorical(labels, 3)
    two_ones[5] = 1
    with pytest.raises(anycl.InvalidArgumentError, match=r"y\[5\].*not one-hot"):
        model.evaluate(x, two_ones, runtime=runtime)
    with pytest.raises(anycl.InvalidArgumentError, match="validation_data: y.*not one-hot"):
        model.fit(x, to_categorical(labels, 3), validation_data=(x, smoothed), runtime=runtime)


def test_the_wrong_kind_of_target_names_the_other_loss(runtime):
    x, labels = blobs(n=8)
    one_hot_model = anycl.Sequential([Dense(3)], input_shape=(8,)).compile(loss="categorical_crossentropy")
    with pytest.raises(anycl.ShapeError, match="to_categorical.*sparse_categorical_crossentropy"):
        one_hot_model.fit(x, labels, runtime=runtime)
    with pytest.raises(anycl.ShapeError, match=r"shape \(samples, 3\)"):
        one_hot_model.fit(x, to_categorical(labels, 4), runtime=runtime)
    sparse_model = anycl.Sequential([Dense(3)], input_shape=(8,)).compile()
    with pytest.raises(anycl.Error, match="categorical_crossentropy"):
        sparse_model.fit(x, to_categorical(labels, 3), runtime=runtime)


def test_recompiling_switches_between_one_hot_and_integer_targets(runtime):
    x, labels = blobs(n=32)
    model = anycl.Sequential([Dense(3)], input_shape=(8,)).compile(loss="categorical_crossentropy")
    model.fit(x, to_categorical(labels, 3), runtime=runtime)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")  # the same loss: weights kept
    model.fit(x, labels, runtime=runtime)
    model.compile(optimizer="sgd")  # loss=None keeps the target kind
    model.fit(x, labels, runtime=runtime)
    copy = pickle.loads(pickle.dumps(anycl.Sequential([Dense(3)], input_shape=(8,))
                                     .compile(loss="categorical_crossentropy")))
    copy.fit(x, to_categorical(labels, 3), runtime=runtime)  # a pickled model keeps its one-hot targets


# -- Keras' data_format= on the image layers ------------------------------------------------------------
def test_the_image_layers_data_format_is_the_models():
    model = anycl.Sequential([Conv2D(4, 3, data_format="channels_last", input_shape=(8, 8, 3)),
                              MaxPooling2D(data_format="channels_last"), Flatten(data_format="channels_last"),
                              Dense(3)])
    assert model.data_format == "channels_last" and model.input_shape == (3, 8, 8)
    added = anycl.Sequential()
    added.add(Input(shape=(8, 8, 3)))
    added.add(Conv2D(4, 3, data_format="channels_last"))
    added.add(Flatten())
    added.add(Dense(3))
    assert added.compile().input_shape == (3, 8, 8)


def test_disagreeing_data_formats_are_refused():
    with pytest.raises(anycl.InvalidArgumentError, match="both data formats"):
        anycl.Sequential([Conv2D(4, 3, data_format="channels_last"), MaxPooling2D(data_format="channels_first"),
                          Flatten(), Dense(3)], input_shape=(8, 8, 3))
    with pytest.raises(anycl.InvalidArgumentError, match="Sequential\\(data_format='channels_first'\\) but"):
        anycl.Sequential([Conv2D(4, 3, data_format="channels_last"), Flatten(), Dense(3)], input_shape=(8, 8, 3),
                         data_format="channels_first")
    with pytest.raises(anycl.InvalidArgumentError, match="data_format must be"):
        Conv2D(4, 3, data_format="NHWC")


# -- Keras' module names a script imports ------------------------------------------------------------------
def test_keras_module_names_a_script_imports(monkeypatch, tmp_path):
    from anycl.datasets import mnist
    from anycl.models import Sequential
    assert Sequential is anycl.Sequential and anycl.utils.to_categorical is to_categorical
    monkeypatch.delenv("ANYCL_DATA", raising=False)
    with pytest.raises(anycl.DataError, match="downloads nothing.*ANYCL_DATA"):
        mnist.load_data()
    monkeypatch.setenv("ANYCL_DATA", str(tmp_path))
    with pytest.raises(anycl.DataError, match=f"no train-images-idx3-ubyte.*in {tmp_path}"):
        mnist.load_data()  # it reads the folder ANYCL_DATA names


def test_a_keras_model_name_is_kept():
    assert anycl.Sequential([Dense(3, input_shape=(8,))], name="classifier").name == "classifier"
