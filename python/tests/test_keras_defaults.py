"""A Keras script's layers mean what they mean in Keras: a hidden Dense or Conv2D that names no
activation is linear (checked against numpy on the model's own weights), and one that names relu is
ReLU; the --layers text keeps the command line's default (ReLU)."""
import numpy as np

import anycl
from anycl.layers import Conv2D, Dense, Flatten


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def forward(x, weights, hidden):
    w1, b1, w2, b2 = weights
    return softmax(hidden(x @ w1 + b1) @ w2 + b2)


def test_a_hidden_dense_without_activation_is_linear_as_in_keras():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 6)).astype(np.float32)
    model = anycl.Sequential([Dense(5), Dense(3)], input_shape=(6,)).compile()
    weights = [rng.normal(size=s).astype(np.float32) for s in ((6, 5), (5,), (5, 3), (3,))]  # Keras' layout
    model.set_weights(weights)
    predicted = model.predict(x)
    np.testing.assert_allclose(predicted, forward(x, weights, lambda z: z), atol=1e-5)
    # the same weights through a ReLU give other probabilities: the check above can tell them apart
    assert np.abs(forward(x, weights, lambda z: np.maximum(z, 0)) - predicted).max() > 1e-3

    relu = anycl.Sequential([Dense(5, activation="relu"), Dense(3)], input_shape=(6,)).compile()
    relu.set_weights(weights)
    np.testing.assert_allclose(relu.predict(x), forward(x, weights, lambda z: np.maximum(z, 0)), atol=1e-5)

    text = anycl.Sequential("5", input_shape=(6,), outputs=3).compile()  # anycl train --layers 5: ReLU
    text.set_weights(weights)
    np.testing.assert_allclose(text.predict(x), forward(x, weights, lambda z: np.maximum(z, 0)), atol=1e-5)


def test_a_conv2d_without_activation_is_linear_as_in_keras():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 1, 5, 5)).astype(np.float32)
    linear = anycl.Sequential([Conv2D(2, 3), Flatten(), Dense(3)], input_shape=(1, 5, 5)).compile()
    linear.set_weights([rng.normal(size=s).astype(np.float32) for s in ((3, 3, 1, 2), (2,), (18, 3), (3,))])
    relu = anycl.Sequential([Conv2D(2, 3, activation="relu"), Flatten(), Dense(3)], input_shape=(1, 5, 5)).compile()
    relu.set_weights(linear.get_weights())
    # A linear convolution lets negative values through, so the two differ on these inputs.
    assert np.abs(linear.predict(x) - relu.predict(x)).max() > 1e-4
    explicit = anycl.Sequential([Conv2D(2, 3, activation="linear"), Flatten(), Dense(3)],
                                input_shape=(1, 5, 5)).compile()
    explicit.set_weights(linear.get_weights())
    np.testing.assert_array_equal(explicit.predict(x), linear.predict(x))
