"""anycl from Python in a dozen lines: list the devices, train a small classifier on its own
data, predict, save and load. Run by tools/check-python-package.sh against the installed package."""
import os
import tempfile

import numpy as np

import anycl
from anycl.layers import Dense

print("devices:", [d["name"] for d in anycl.devices()])
rng = np.random.default_rng(0)
x = rng.standard_normal((1024, 2)).astype(np.float32)
y = (x[:, 0] * x[:, 1] > 0).astype(np.int32)  # XOR of the signs

model = anycl.Sequential([Dense(32, activation="relu"), Dense(32, activation="relu"), Dense(2)], input_shape=(2,))
model.compile(optimizer="adam", lr=0.01)
history = model.fit(x, y, epochs=20, batch_size=32, validation_split=0.2)
print("val_accuracy per epoch:", [round(a, 3) for a in history.history["val_accuracy"]])

path = os.path.join(tempfile.mkdtemp(), "xor.anycl")
model.save(path)
again = anycl.load_model(path)
assert np.array_equal(again.predict(x[:8]), model.predict(x[:8]))
assert history.history["val_accuracy"][-1] > 0.9, "did not learn"
print("ok: trained, predicted, saved and reloaded with anycl", anycl.__version__, "from", anycl.__file__)
