# No leak (docs/guarantees.md, "Memory"): making and destroying a runtime and a model in a loop
# plateaus, also while another runtime stays alive (CLBlast's per-context programs once kept every
# destroyed runtime's context: ~2.5 MiB a cycle). Linux: resident memory from /proc.
import gc
import os

import pytest

import anycl

from test_threads import circle, trained


def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="resident memory is read from Linux's /proc")
def test_runtime_and_model_cycles_plateau_beside_a_live_runtime(runtime, tmp_path):
    path = str(tmp_path / "model.anycl")
    trained(runtime).save(path)
    x, y = circle()

    def cycle():
        rt = anycl.Runtime()
        model = anycl.load_model(path)
        model.fit(x, y, epochs=1, runtime=rt)
        model.predict(x, runtime=rt)
        del model, rt
        gc.collect()

    for _ in range(8):  # warm: caches, allocator arenas
        cycle()
    before = resident_mib()
    for _ in range(30):
        cycle()
    grown = resident_mib() - before
    assert grown < 20, f"30 cycles grew resident memory by {grown:.1f} MiB (a leak of {grown / 30:.2f} MiB a cycle)"
