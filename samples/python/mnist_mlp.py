"""Keras' mnist_mlp.py, ported to anycl: 784-512-512-10 with ReLU and dropout 0.2, RMSprop,
batch 128, 20 epochs, on Fashion-MNIST (or the MNIST-format folder in $ANYCL_DATA or argv[1]).
Same model, same seed and same data as `anycl train`, so the same per-epoch losses."""
import sys

import numpy as np

import anycl
from anycl.layers import Dense, Dropout

batch_size, num_classes, epochs = 128, 10, 20

# the data, split between train and test sets; uint8 pixels go to the device as they are and are
# scaled by 1/255 there (as `anycl train` does); float32 features would be used as given
(x_train, y_train), (x_test, y_test) = anycl.datasets.load_data(sys.argv[1] if len(sys.argv) > 1 else None)
x_train = x_train.reshape(len(x_train), 784)
x_test = x_test.reshape(len(x_test), 784)
print(x_train.shape[0], "train samples")
print(x_test.shape[0], "test samples")

model = anycl.Sequential([
    Dense(512, activation="relu"),
    Dropout(0.2),
    Dense(512, activation="relu"),
    Dropout(0.2),
    Dense(num_classes),  # linear: the softmax is in the loss (sparse categorical cross-entropy)
], input_shape=(784,))
model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy")
model.summary()

history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=1,
                    validation_data=(x_test, y_test))
score = model.evaluate(x_test, y_test)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
np.set_printoptions(precision=3, suppress=True)
print("first test image's class probabilities:", model.predict(x_test[:1])[0])
