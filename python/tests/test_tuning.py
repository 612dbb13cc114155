# anycl.tune and fit's first-use tuning. Each runs in a Python process of its own, with the cache in a
# scratch folder and the tests' small tuning database (two quickly compiled sets per kernel, matching
# no device): a tuning applies CLBlast parameters process-wide, which the other tests (bit-equal to
# `anycl train` with CLBlast's defaults) must not see.
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import anycl

SMALL_DATABASE = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "tuning_database")


def run_script(tmp_path, body, env_changes, timeout=600):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(anycl.__path__[0]),
                                                        os.environ.get("PYTHONPATH", "")]))
    env.pop("ANYCL_TUNE_WORKER", None)
    env.update(env_changes)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(tmp_path))
    return done.returncode, done.stdout + done.stderr


PRELUDE = """
    import os, sys, numpy as np, anycl
    from anycl.layers import Dense
    try:
        rt = anycl.Runtime()
    except anycl.DeviceError as e:
        print("no device:", e); sys.exit(77)
    model = anycl.Sequential([Dense(24), Dense(3)], input_shape=(40,))
    model.compile(optimizer="sgd")
"""


def skip_without_device(code, output):
    if code == 77:
        if os.environ.get("CI") == "true":
            pytest.fail(output)
        pytest.skip(output)


def test_tune_stopped_by_its_progress_callback_keeps_the_best_set_found(runtime, tmp_path):
    cache = tmp_path / "cache"
    code, output = run_script(tmp_path, PRELUDE + """
    seen = []
    def progress(p):
        seen.append(p)
        return p.candidates < 1
    r = anycl.tune(model, batch_size=48, minutes=30, progress=progress, verbose=0, runtime=rt)
    assert r.tuned and r.stopped, r
    # At least the one seen, and any set the worker finished before the stop was seen (results are read
    # every 0.1 s): at most the first stage's shortlist, CLBlast's current set and the database's two.
    assert 1 <= r.candidates <= 3, r
    assert [p.candidates for p in seen].count(1) >= 1
    assert any(p.stage == "XgemmDirect" for p in seen)
    assert r.ms_before > 0
    # What it was measured against (the small database matches no device), and nothing kept: stopped.
    assert r.against == "CLBlast's own parameters" and r.kept_entry is False, r
    assert os.path.dirname(r.path) == os.environ["ANYCL_CACHE_DIR"], r.path
    assert "XgemmDirect" in open(r.path).read()
    # The callback's exception stops the tuning and is raised from tune().
    class Boom(Exception): pass
    def fails(p): raise Boom()
    try:
        anycl.tune(model, quick=True, progress=fails, verbose=0, runtime=rt)
        raise AssertionError("no exception")
    except Boom:
        pass
    print("OK")
    """, {"ANYCL_CACHE_DIR": str(cache), "ANYCL_TUNING_DATABASE": SMALL_DATABASE})
    skip_without_device(code, output)
    assert code == 0 and "OK" in output, output


def test_tune_says_what_it_was_measured_against_and_whether_it_kept_that(runtime, tmp_path):
    # The small sets as an entry of this device's platform: a quick tune measures against it and keeps it
    # unless beaten by 5 %. Which of the two happens is timing's: each is checked for what it reports.
    selected = [d for d in anycl.devices() if d.get("selected")]
    assert selected, "no selected device"
    with open(os.path.join(SMALL_DATABASE, "small-sets.txt")) as f:
        entry = f.read()
    assert "match device=a device no machine has" in entry
    platform = selected[0]["platform_name"]
    entry = entry.replace("match device=a device no machine has",
                          f"match platform={platform}\nkernel GemmRoutine XGEMM_MIN_INDIRECT_SIZE=1")
    database = tmp_path / "database"
    database.mkdir()
    (database / "small-sets.txt").write_text(entry)
    code, output = run_script(tmp_path, PRELUDE + """
    r = anycl.tune(model, batch_size=48, quick=True, verbose=0, runtime=rt)
    assert r.tuned and not r.stopped, r
    assert r.against.startswith("the ") and r.against.endswith("small-sets.txt parameters"), r
    if r.kept_entry:
        assert r.ms_after == r.ms_before, r
    else:
        assert r.ms_after * 1.05 <= r.ms_before, r
    print("OK", r.kept_entry)
    """, {"ANYCL_CACHE_DIR": str(tmp_path / "cache"), "ANYCL_TUNING_DATABASE": str(database)})
    skip_without_device(code, output)
    assert code == 0 and "OK" in output, output


def test_fit_tunes_on_first_use_once_and_autotune_false_skips_it(runtime, tmp_path):
    cache = tmp_path / "cache"
    code, output = run_script(tmp_path, PRELUDE + """
    x = np.random.default_rng(1).random((96, 40), dtype=np.float32)
    y = (x[:, 0] * 3).astype(np.int32) % 3
    path = anycl.tuning.text(anycl.tuning.lib.anycl_tuning_file_path, rt._h)
    model.fit(x, y, epochs=1, batch_size=48, verbose=1, runtime=rt, autotune=False)
    assert not os.path.exists(path), "autotune=False tuned"
    print("---")
    model.fit(x, y, epochs=1, batch_size=48, verbose=1, runtime=rt)
    assert os.path.exists(path), "no first-use tuning"
    print("---")
    model.fit(x, y, epochs=1, batch_size=48, verbose=1, runtime=rt)  # tuned before: nothing to do
    print("OK")
    """, {"ANYCL_CACHE_DIR": str(cache), "ANYCL_TUNING_DATABASE": SMALL_DATABASE, "ANYCL_AUTOTUNE": "on"})
    skip_without_device(code, output)
    assert code == 0 and "OK" in output, output
    no, first, again = output.split("---")
    assert "first use of this device" not in no
    assert "first use of this device" in first and "first-use tuning: the model's GEMMs take" in first, output
    assert "first use of this device" not in again


def test_tune_without_the_worker_program_says_where_it_looked(runtime, tmp_path):
    library = os.environ.get("ANYCL_LIBRARY")
    if not library:  # an installed package: its library is the one beside the package
        library = anycl._lib._library_path()
    alone = tmp_path / "alone"
    alone.mkdir()
    copy = alone / os.path.basename(library)
    shutil.copy(library, copy)
    code, output = run_script(tmp_path, PRELUDE + """
    try:
        anycl.tune(model, quick=True, verbose=0, runtime=rt)
    except anycl.UnsupportedError as e:
        print("refused:", e)
    """, {"ANYCL_LIBRARY": str(copy), "ANYCL_CACHE_DIR": str(tmp_path / "cache")})
    skip_without_device(code, output)
    assert code == 0, output
    assert "refused: anycl's tuning worker program anycl-tune-worker" in output, output
    assert str(alone) in output and "ANYCL_TUNE_WORKER" in output, output
