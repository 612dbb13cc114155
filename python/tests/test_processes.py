# Copies, pickling and worker processes (docs/guarantees.md, "Processes"): copy.copy and deepcopy
# of models and runtimes never leave two owners of one handle; models pickle through the model
# file's bytes (spawn workers get them); a child forked after OpenCL was used is refused at once with
# the cause and the fix, never a hang. Each case that forks or spawns runs in its own process.
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import anycl

from test_threads import circle, trained


def test_copy_of_a_model_is_a_real_copy(runtime):
    x, _ = circle()
    model = trained(runtime)
    expected = model.predict(x, runtime=runtime)
    for make in (copy.copy, copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))):
        other = make(model)
        assert other._h.value != model._h.value
        assert np.array_equal(other.predict(x, runtime=runtime), expected)
        del other  # frees its own handle only
        assert np.array_equal(model.predict(x, runtime=runtime), expected)


def test_copy_of_a_model_without_weights_compiles_the_same_model(runtime):
    x, y = circle()
    model = anycl.Sequential("16", input_shape=(2,), outputs=2, dropout=0.0).compile(optimizer="adam")
    other = copy.deepcopy(model)
    a = model.fit(x, y, epochs=2, runtime=runtime).history["loss"]
    b = other.fit(x, y, epochs=2, runtime=runtime).history["loss"]
    assert a == b
    assert copy.copy(anycl.Sequential("16", input_shape=(2,), outputs=2))._h is None  # not compiled: still not


def test_copy_of_a_runtime_shares_it_and_pickling_one_is_refused(runtime):
    x, _ = circle()
    model = trained(runtime)
    for other in (copy.copy(runtime), copy.deepcopy(runtime)):
        assert other is runtime
    del other
    model.predict(x, runtime=runtime)
    with pytest.raises(TypeError, match="create anycl.Runtime"):
        pickle.dumps(runtime)


def run_script(tmp_path, body, timeout=300):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(anycl.__path__[0]),
                                                        os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(tmp_path))
    return done.returncode, done.stdout + done.stderr


def test_a_child_forked_after_opencl_was_used_is_refused_at_once(runtime, tmp_path):
    path = str(tmp_path / "model.anycl")
    trained(runtime).save(path)
    code, output = run_script(tmp_path, f"""
        import os, sys, numpy as np, anycl
        model = anycl.load_model({path!r})
        x = np.zeros((3, 2), dtype=np.float32)
        model.predict(x)  # the parent uses OpenCL (the default runtime)
        pid = os.fork()
        if pid == 0:
            refused = []
            for what, call in [("devices", anycl.devices), ("predict", lambda: model.predict(x)),
                               ("Runtime", anycl.Runtime), ("fit", lambda: model.fit(x, np.zeros(3, np.int32)))]:
                try:
                    call()
                except anycl.UnsupportedError as e:
                    refused.append(what if "forked" in str(e) and "spawn" in str(e) else what + ": " + str(e))
            print("child refused:", refused, flush=True)
            sys.exit(0 if refused == ["devices", "predict", "Runtime", "fit"] else 1)  # a normal exit: no hang
        _, status = os.waitpid(pid, 0)
        print("parent predicts:", model.predict(x).shape)
        sys.exit(os.waitstatus_to_exitcode(status))
    """)
    assert code == 0, output
    assert "parent predicts: (3, 2)" in output and "child refused" in output, output


def test_multiprocessing_fork_workers_fail_with_the_fix_and_spawn_workers_predict(runtime, tmp_path):
    path = str(tmp_path / "model.anycl")
    model = trained(runtime)
    model.save(path)
    code, output = run_script(tmp_path, f"""
        import multiprocessing, numpy as np, anycl

        def predict(args):
            model, rows = args
            return model.predict(np.full((rows, 2), 0.25, dtype=np.float32))

        if __name__ == "__main__":
            model = anycl.load_model({path!r})
            expected = predict((model, 4))
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                results = pool.map(predict, [(model, 4), (model, 4)])  # the model pickled to each worker
            print("spawn equal:", all(np.array_equal(r, expected) for r in results))
            with multiprocessing.get_context("fork").Pool(2) as pool:
                try:
                    pool.map(predict, [(model, 4)])
                    print("fork: no error")
                except anycl.UnsupportedError as e:
                    print("fork refused:", "spawn" in str(e))
    """)
    assert code == 0, output
    assert "spawn equal: True" in output and "fork refused: True" in output, output


def test_a_child_forked_while_a_thread_is_inside_anycl_does_not_wait_for_it_at_exit(tmp_path):
    code, output = run_script(tmp_path, """
        import os, threading, anycl
        from anycl import _safety
        inside, release = threading.Event(), threading.Event()

        def call():
            with _safety._in_flight.call():  # as each predict chunk and fit is counted
                inside.set()
                release.wait(60)

        thread = threading.Thread(target=call)
        thread.start()
        inside.wait(60)
        pid = os.fork()  # while the parent's count says a call is running
        if pid == 0:
            os._exit(_safety._in_flight._count)  # the child's own count: nothing runs in it
        _, status = os.waitpid(pid, 0)
        release.set()
        thread.join()
        print("parent's calls:", _safety._in_flight._count, "child's calls:", os.waitstatus_to_exitcode(status))
    """)
    assert code == 0 and "parent's calls: 0 child's calls: 0" in output, output
