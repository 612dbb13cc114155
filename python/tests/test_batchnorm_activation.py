"""Keras' block Conv2D → BatchNormalization → ReLU through the Python package: the activation layer
after a BatchNormalization is fused into it (the Conv2D or Dense before it linear, as Keras reads it),
and predict applies it after the normalisation (checked against numpy)."""

import numpy as np
import pytest

import anycl
from anycl.layers import ELU, Activation, BatchNormalization, Conv2D, Dense, Flatten, MaxPool2D, ReLU


def test_an_activation_after_batchnorm_joins_it_and_the_layer_before_is_linear():
    keras_style = anycl.Sequential([Conv2D(2, 3), BatchNormalization(axis=1), ReLU(), MaxPool2D(2), Flatten(),
                                    Dense(4), BatchNormalization(momentum=0.9), ELU(), Dense(3)],
                                   input_shape=(1, 6, 6))
    assert keras_style._layers == "conv2x3:linear,bn:relu,pool2,flatten,4:linear,bn0.9_0.001:elu"
    # A layer that names its own activation keeps it; the activation still joins the normalisation.
    named = anycl.Sequential([Conv2D(2, 3, activation="tanh"), BatchNormalization(), Activation("gelu"),
                              Flatten(), Dense(3)], input_shape=(1, 6, 6))
    assert named._layers == "conv2x3:tanh,bn:gelu,flatten"
    with pytest.raises(anycl.InvalidArgumentError, match="must follow a Dense, Conv2D or BatchNormalization"):
        anycl.Sequential([Dense(8), BatchNormalization(), ReLU(), ReLU(), Dense(2)], input_shape=(4,))
    with pytest.raises(anycl.InvalidArgumentError, match="must follow"):
        anycl.Sequential([Dense(8), BatchNormalization(), Activation("softmax"), Dense(2)], input_shape=(4,))


def test_conv_bn_relu_trains_and_predicts_as_numpy_does(runtime, tmp_path):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, size=(96, 1, 6, 6)).astype(np.float32)
    y = np.digitize(x.reshape(96, -1)[:, ::3].sum(axis=1), [-0.5, 0.5]).astype(np.int64)
    model = anycl.Sequential([Conv2D(2, 3), BatchNormalization(axis=1, momentum=0.9), ReLU(), Flatten(),
                              Dense(3)], input_shape=(1, 6, 6)).compile(optimizer="adam")
    assert "relu" in model.summary_text()
    model.fit(x, y, epochs=2, batch_size=32, runtime=runtime)
    w = model.get_weights()
    conv = np.zeros((len(x), 2, 4, 4), dtype=np.float64)
    for i in range(4):
        for j in range(4):
            conv[:, :, i, j] = np.einsum("nab,abf->nf", x[:, 0, i:i + 3, j:j + 3], w[0][:, :, 0, :]) + w[1]
    gamma, beta, mean, var = (v.reshape(1, -1, 1, 1) for v in w[2:6])
    h = np.maximum((conv - mean) / np.sqrt(var + 0.001) * gamma + beta, 0).reshape(len(x), -1)
    logits = h @ w[6] + w[7]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict(x, runtime=runtime), p / p.sum(axis=1, keepdims=True), atol=1e-5)
    path = str(tmp_path / "bnrelu.anycl")
    model.save(path)
    assert anycl.load_model(path).predict(x, runtime=runtime).tobytes() == model.predict(x, runtime=runtime).tobytes()
