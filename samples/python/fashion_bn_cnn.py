"""A BatchNorm CNN on Fashion-MNIST, the way a Keras user writes one: convolution blocks with
BatchNormalization, GlobalAveragePooling2D instead of Flatten + a large Dense, Adam, batch 128.
Same model as `anycl train --model bncnn` (docs/training.md, "The BatchNorm CNN").

Keras' usual block, Conv2D (linear) → BatchNormalization → ReLU, written as Keras writes it: the
ReLU joins the BatchNormalization before it (applied in its normalisation pass), and the Conv2D
before that is linear, as in Keras (tools/pytorch_reference.py --model bncnn has the same order).

    python3 samples/python/fashion_bn_cnn.py [DATA_DIR] [--epochs N] [--limit N]

Give it a few hundred steps (the default, 2 epochs of 60,000 images, is 938): evaluate and predict use
the moving statistics, which still hold 0.9^steps of their starting values (e.g. 12 % after the 20
steps of --limit 2560 --epochs 1, whose test accuracy is then near chance)."""
import argparse

import anycl
from anycl.layers import BatchNormalization, Conv2D, Dense, GlobalAveragePooling2D, MaxPooling2D, ReLU

p = argparse.ArgumentParser()
p.add_argument("data", nargs="?", default=None, help="an MNIST-format folder (default: Fashion-MNIST)")
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--limit", type=int, default=0, help="train on the first N images only (0: all 60000)")
a = p.parse_args()

(x_train, y_train), (x_test, y_test) = anycl.datasets.load_data(a.data)
if a.limit:
    x_train, y_train = x_train[:a.limit], y_train[:a.limit]
# anycl's images are channels first: (samples, 1, 28, 28). uint8 pixels are scaled by 1/255 on the
# device. (Keras' (samples, 28, 28, 1) works too with Sequential(..., data_format="channels_last").)
x_train = x_train.reshape(-1, 1, 28, 28)
x_test = x_test.reshape(-1, 1, 28, 28)

model = anycl.Sequential([
    Conv2D(32, 3),
    # per channel: the batch's statistics in fit, the moving ones in evaluate/predict. momentum 0.9
    # (PyTorch's default; Keras' is 0.99): the moving variance starts at 1 and forgets it as
    # momentum^steps, slower than a few epochs of a small data set at 0.99 (docs/training.md,
    # "The BatchNorm CNN")
    BatchNormalization(momentum=0.9),
    ReLU(),
    Conv2D(64, 3),
    BatchNormalization(momentum=0.9),
    ReLU(),
    MaxPooling2D(2),
    Conv2D(64, 3),
    BatchNormalization(momentum=0.9),
    ReLU(),
    GlobalAveragePooling2D(),  # (64, 10, 10) → (64,): no Flatten
    Dense(10),  # linear: the softmax is in the loss
], input_shape=(1, 28, 28))
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.summary()

model.fit(x_train, y_train, batch_size=128, epochs=a.epochs, verbose=1, validation_data=(x_test, y_test))
loss, accuracy = model.evaluate(x_test, y_test)
print(f"Test loss: {loss:.4f}")
print(f"Test accuracy: {accuracy:.4f}")
