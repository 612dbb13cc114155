"""How soon a saved model answers in a new process (a command-line tool, a web worker starting up): the
seconds from the start of this script to the first prediction — importing NumPy and anycl, loading the
model file and predicting one row — as an application pays them on a warm machine (anycl's and the
OpenCL driver's kernel caches filled by an earlier run). Run it twice: the first run may fill them.

    python3 first_prediction.py MODEL.anycl        # e.g. after: anycl train --save MODEL.anycl
"""
import sys
import time

start = time.perf_counter()
import numpy as np  # noqa: E402 — the imports are part of what is timed

import anycl  # noqa: E402

imported = time.perf_counter()
if len(sys.argv) != 2:
    sys.exit("usage: first_prediction.py MODEL.anycl")
model = anycl.load_model(sys.argv[1])
row = np.zeros((1,) + tuple(model.input_shape), np.float32)
probabilities = model.predict(row)
done = time.perf_counter()
print(f"import {imported - start:.3f} s, load and first prediction {done - imported:.3f} s, "
      f"first result {done - start:.3f} s after start (output shape {probabilities.shape})")
