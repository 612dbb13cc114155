# Threads (docs/guarantees.md, "Threads"): predictions from several threads at once equal the same
# calls made one after another, on an explicit runtime and on the implicit default one; the first
# use from several threads at once works. The first use runs in its own process, with a timeout.
import os
import subprocess
import sys
import threading

import numpy as np

import anycl

THREADS = 4


def circle(n=512):
    i = np.arange(n)
    x = np.stack([(i % 23) / 11 - 1, ((i * 7) % 29) / 14 - 1], axis=1).astype(np.float32)
    y = ((x ** 2).sum(axis=1) < 0.36).astype(np.int32)
    return x, y


def trained(runtime, layers="32,32", seed=1):
    x, y = circle()
    model = anycl.Sequential(layers, input_shape=(2,), outputs=2, dropout=0.0)
    model.compile(optimizer="adam", lr=0.01)
    model.fit(x, y, epochs=3, batch_size=32, seed=seed, runtime=runtime)
    return model


def calls(model, runtime, rounds=1):
    x, _ = circle()
    model.predict(x, runtime=runtime)  # the largest first: every recorded call runs on the same device build
    return [model.predict(x[a:a + n], runtime=runtime) for _ in range(rounds) for a, n in ((0, 1), (3, 7), (10, 300))]


def in_threads(work):
    results, errors = [None] * THREADS, []
    start = threading.Barrier(THREADS)

    def run(t):
        try:
            start.wait()
            results[t] = work(t)
        except Exception as e:  # reported on the main thread
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a predicting thread did not finish (deadlock?)"
    assert not errors, errors
    return results


def test_threads_predicting_with_one_model_equal_the_serial_calls(runtime):
    model = trained(runtime)
    serial = calls(model, runtime)
    for per_thread in in_threads(lambda t: calls(model, runtime, rounds=3)):
        for i, out in enumerate(per_thread):
            assert np.array_equal(out, serial[i % len(serial)])


def test_threads_on_the_default_runtime_with_their_own_models_equal_the_serial_calls(runtime):
    models = [trained(None, "16" if t % 2 else "32,32", seed=t + 1) for t in range(THREADS)]
    serial = [calls(m, None) for m in models]
    for t, per_thread in enumerate(in_threads(lambda t: calls(models[t], None, rounds=3))):
        for i, out in enumerate(per_thread):
            assert np.array_equal(out, serial[t][i % len(serial[t])])


FIRST_USE = r"""
import threading, numpy as np, anycl
model = anycl.load_model(PATH)
x = np.zeros((5, 2), dtype=np.float32)
results, errors = [None] * 4, []
start = threading.Barrier(4)
def run(t):
    try:
        start.wait()
        anycl.devices()
        results[t] = model.predict(x)  # the default runtime, created by whichever thread comes first
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
assert not errors, errors
assert all(np.array_equal(r, results[0]) for r in results)
print("ok")
"""


def test_first_use_from_threads_at_once_works(runtime, tmp_path):
    path = str(tmp_path / "model.anycl")
    trained(runtime).save(path)
    script = FIRST_USE.replace("PATH", repr(path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr


DAEMON_AT_EXIT = r"""
import threading, time, numpy as np, anycl
x = np.random.default_rng(0).random((2048, 32), dtype=np.float32)
y = np.arange(2048) % 4
model = anycl.Sequential("64,64", input_shape=(32,), outputs=4).compile()
model.fit(x, y, epochs=1)
busy = threading.Event()

class Busy(anycl.Callback):
    def on_progress(self, *args):
        busy.set()

def fit():
    model.fit(x, y, epochs=10 ** 6, callbacks=[Busy()])

def predict():
    while True:
        model.predict(x)
        busy.set()

threading.Thread(target=WORK, daemon=True).start()
busy.wait(120)
print("main returns", flush=True)
"""


def test_the_main_thread_returning_while_a_daemon_thread_is_inside_anycl_exits_cleanly(runtime):
    for work in ("fit", "predict"):
        done = subprocess.run([sys.executable, "-c", DAEMON_AT_EXIT.replace("WORK", work)], capture_output=True,
                              text=True, timeout=300, env=dict(os.environ))
        assert done.returncode == 0 and "main returns" in done.stdout, (work, done.returncode, done.stderr[-2000:])
