#!/usr/bin/env python3
"""onnxruntime's side of `anycl bench predict`: batch-1 latency and batch throughput of an ONNX
model (as `anycl_model_export_onnx` writes it) on onnxruntime's CPU execution provider with its
default settings, measured the way anycl's side is (same counts, same random inputs in [0, 1)).

usage: onnxruntime_predict.py MODEL.onnx --count N --warmup N --batches 128,1024 --repeats N
Prints one JSON object on its last line. Exit 77: onnxruntime or numpy is not installed (the
caller says so and leaves the column out)."""
import argparse
import json
import sys
import time

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    print(f"onnxruntime not available: {e} — pip install onnxruntime numpy "
          "(tools/setup.sh installs them into build/onnx-venv)")
    sys.exit(77)


def percentile(sorted_values, p):
    """The nearest-rank percentile, as anycl's side computes it."""
    rank = max(1, int(np.ceil(p / 100.0 * len(sorted_values))))
    return sorted_values[rank - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--batches", default="128,1024")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()

    session = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    inp = session.get_inputs()[0]
    sample_shape = [int(d) for d in inp.shape[1:]]
    rng = np.random.default_rng(1)

    x1 = rng.random([1] + sample_shape, dtype=np.float32)
    for _ in range(a.warmup):
        session.run(None, {inp.name: x1})
    times = []
    for _ in range(a.count):
        t0 = time.perf_counter()
        session.run(None, {inp.name: x1})
        times.append(time.perf_counter() - t0)
    times.sort()

    throughput = {}
    for batch in [int(b) for b in a.batches.split(",") if b]:
        xb = rng.random([batch] + sample_shape, dtype=np.float32)
        session.run(None, {inp.name: xb})  # warm-up
        rates = []
        for _ in range(a.repeats):
            calls, t0 = 0, time.perf_counter()
            while True:  # at least 2 calls and 0.2 s per repeat
                session.run(None, {inp.name: xb})
                calls += 1
                elapsed = time.perf_counter() - t0
                if calls >= 2 and elapsed >= 0.2:
                    break
            rates.append(batch * calls / elapsed)
        throughput[str(batch)] = float(np.median(rates))

    print(json.dumps({
        "engine": f"onnxruntime {ort.__version__}",
        "providers": session.get_providers(),
        "count": a.count,
        "p50_ms": percentile(times, 50) * 1e3,
        "p99_ms": percentile(times, 99) * 1e3,
        "throughput": throughput,
    }))


if __name__ == "__main__":
    main()
