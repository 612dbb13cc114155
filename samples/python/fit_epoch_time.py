"""Per-epoch seconds of Python fit for the reference MLP on the first N training images (argv[1]),
evaluating on the test set each epoch like `anycl train --limit N`: compare with its metrics file."""
import sys

import anycl
from anycl.layers import Dense, Dropout

n = int(sys.argv[1])
(x, y), (xt, yt) = anycl.datasets.load_data()
m = anycl.Sequential([Dense(512, activation="relu"), Dropout(0.2), Dense(512, activation="relu"), Dropout(0.2),
                      Dense(10)], input_shape=(784,))
m.compile(optimizer="rmsprop")
h = m.fit(x[:n].reshape(n, 784), y[:n], epochs=3, batch_size=128, seed=1, validation_data=(xt.reshape(-1, 784), yt))
print("python epoch seconds:", [round(s, 3) for s in h.seconds])
