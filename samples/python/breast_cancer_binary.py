"""A tabular binary classifier, the way a Keras user writes one: the Wisconsin breast cancer data set
(569 tumours, 30 measurements each, malignant or benign), which ships inside scikit-learn (no
download), standardised; Dense relu layers and a Dense(1, activation="sigmoid") output trained with
binary_crossentropy; then evaluate, save → load_model → predict.

    python3 samples/python/breast_cancer_binary.py [--epochs N] [--save FILE]

Needs scikit-learn for the data only (`pip install scikit-learn`; tools/setup.sh puts it into
build/onnx-venv). python/tests/test_samples.py runs this file."""
import argparse
import os
import tempfile

import numpy as np
from sklearn.datasets import load_breast_cancer

import anycl
from anycl.layers import Dense, Dropout

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=30)
p.add_argument("--save", default=None, help="model file to keep (default: a temporary one, removed)")
a = p.parse_args()

# The data: float64 features, targets 0 (malignant) / 1 (benign). A fixed shuffle, then 80% to train.
x, y = load_breast_cancer(return_X_y=True)
order = np.random.default_rng(0).permutation(len(x))
x, y = x[order].astype(np.float32), y[order].astype(np.float32)
n_train = int(0.8 * len(x))
x_train, y_train, x_test, y_test = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
# Standardise with the training split's statistics (features range from 0.001 to 4,000).
mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-7
x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
print(f"{len(x_train)} train, {len(x_test)} test samples, {x.shape[1]} features; "
      f"{y.mean():.0%} of the tumours benign")

model = anycl.Sequential([
    Dense(32, activation="relu"),
    Dropout(0.2),
    Dense(16, activation="relu"),
    Dense(1, activation="sigmoid"),  # the sigmoid is computed in the binary_crossentropy loss (stable)
], input_shape=(x.shape[1],))
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
model.summary()

model.fit(x_train, y_train, epochs=a.epochs, batch_size=32, verbose=0)
loss, accuracy = model.evaluate(x_test, y_test)
print(f"Test loss: {loss:.4f}")
print(f"Test accuracy: {accuracy:.4f}")

# Save, load and predict: the loaded model gives the same probabilities.
with tempfile.TemporaryDirectory() as scratch:
    path = a.save or os.path.join(scratch, "breast_cancer.anycl")
    model.save(path)
    loaded = anycl.load_model(path)
p_model, p_loaded = model.predict(x_test), loaded.predict(x_test)  # (samples, 1) probabilities of "benign"
assert np.array_equal(p_model, p_loaded), "the loaded model predicts differently"
predicted = (p_loaded[:, 0] > 0.5).astype(np.float32)
print(f"the loaded model's accuracy: {np.mean(predicted == y_test):.4f}" + (f" (saved to {a.save})" if a.save else ""))
print("first five test tumours: P(benign) =", np.round(p_loaded[:5, 0], 3), "truth:", y_test[:5])
