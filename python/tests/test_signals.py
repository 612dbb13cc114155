# Signals (docs/guarantees.md, "Signals"): an application's own SIGINT handler is called during fit
# (chained, not replaced) and put back after it; predict works in chunks between which Python runs
# a Ctrl-C handler, with results equal to one call. Ctrl-C itself runs in its own process.
import os
import subprocess
import sys
import textwrap

import numpy as np

import anycl

from test_threads import circle, trained


def test_predict_in_chunks_equals_the_rows_predicted_alone(runtime, monkeypatch):
    x, _ = circle()
    model = trained(runtime)
    whole = model.predict(x, runtime=runtime)
    monkeypatch.setattr(anycl._safety, "_PREDICT_CHUNK", 256)  # 512 rows: two chunks
    assert np.array_equal(model.predict(x, runtime=runtime), whole)


def test_an_applications_sigint_handler_is_called_during_fit_and_kept(runtime, tmp_path):
    script = tmp_path / "chained.py"
    script.write_text(textwrap.dedent("""
        import os, signal, numpy as np, anycl
        from test_threads import circle
        calls = []
        def handler(signum, frame):
            calls.append(signum)
        signal.signal(signal.SIGINT, handler)

        class CtrlC(anycl.Callback):
            def on_epoch_end(self, epoch, logs):
                if epoch == 1:
                    os.kill(os.getpid(), signal.SIGINT)

        x, y = circle()
        model = anycl.Sequential("16", input_shape=(2,), outputs=2).compile(optimizer="adam")
        history = model.fit(x, y, epochs=3, callbacks=[CtrlC()])
        print("handler called:", calls == [signal.SIGINT], "epochs:", len(history.history["loss"]),
              "kept:", signal.getsignal(signal.SIGINT) is handler)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.path.dirname(anycl.__path__[0]),
                                                        os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "handler called: True epochs: 3 kept: True" in done.stdout, done.stdout + done.stderr
