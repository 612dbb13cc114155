"""Batch-1 latency (p50, p99) and batch-1000 throughput of the reference MLP through the C API
(Python ctypes), beside onnxruntime on the exported ONNX model, in the same run. Needs onnxruntime."""
import time

import numpy as np
import onnxruntime as ort

import anycl
from anycl.layers import Dense, Dropout

(x, y), (xt, yt) = anycl.datasets.load_data()
m = anycl.Sequential([Dense(512, activation="relu"), Dropout(0.2), Dense(512, activation="relu"), Dropout(0.2),
                      Dense(10)], input_shape=(784,))
m.compile(optimizer="rmsprop")
m.fit(x[:2048].reshape(-1, 784), y[:2048], epochs=1)
m.export_onnx("mlp.onnx")
xs = xt[:1000].reshape(-1, 784).astype(np.float32) / 255


def lat(f):
    for i in range(50):
        f(xs[i : i + 1])
    t = []
    for i in range(1000):
        s = time.perf_counter()
        f(xs[i : i + 1])
        t.append(time.perf_counter() - s)
    t = np.array(t) * 1e3
    return np.percentile(t, 50), np.percentile(t, 99)


def thr(f, b=1000, n=5):
    f(xs[:b])
    s = time.perf_counter()
    for _ in range(n):
        f(xs[:b])
    return b * n / (time.perf_counter() - s)


sess = ort.InferenceSession("mlp.onnx", providers=["CPUExecutionProvider"])
name = sess.get_inputs()[0].name


def o(a):
    return sess.run(None, {name: a})


print("anycl (C API via ctypes) batch-1 p50 %.3f ms p99 %.3f ms; batch-1000 %.0f samples/s"
      % (*lat(m.predict), thr(m.predict)))
print("onnxruntime CPU          batch-1 p50 %.3f ms p99 %.3f ms; batch-1000 %.0f samples/s" % (*lat(o), thr(o)))
print("max |p_anycl - p_ort| =", float(np.abs(m.predict(xs[:100]) - o(xs[:100])[0]).max()))
