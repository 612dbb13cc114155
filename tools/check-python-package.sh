#!/usr/bin/env bash
# The Python package as a user installs it: `pip install .` into a fresh venv (build/pip-check-venv;
# scikit-build-core builds libanycl into build/python-wheel, with ccache where installed), then
# samples/python/quick_check.py — devices, train, predict, save, load — through the installed package
# alone (no ANYCL_LIBRARY, no build tree on the path). Run by tools/run-tests.sh once, on PoCL.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/pip-check-venv
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
args=()
if command -v ccache >/dev/null; then
  # Without the precompiled library header, as setup.sh builds build/ with ccache (CMakeLists.txt, ANYCL_LIBRARY_PCH).
  args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DANYCL_LIBRARY_PCH=OFF)
  # The compiler build/ used, by the same name: ccache hashes the name (scikit-build-core picks g++ where
  # CMake picked c++), and with it 104 of the library's 110 objects come from the cache (pip 152 -> 34 s).
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)
  if [ -n "$compiler" ]; then args+=("-DCMAKE_CXX_COMPILER=$compiler"); fi
fi
start=$SECONDS
log=$(mktemp)
if ! CMAKE_ARGS="${args[*]}" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/pip" install -q . >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "check-python-package: pip install . failed (above; full log: $log)" >&2
  exit 1
fi
rm -f "$log"
echo "check-python-package: pip install . took $((SECONDS - start)) s" >&2
(cd /tmp && env -u ANYCL_LIBRARY -u PYTHONPATH "$OLDPWD/$venv/bin/python" "$OLDPWD/samples/python/quick_check.py")
# The package carries the tuning worker beside its library: anycl.tune finds it (stopped at its first
# line, it measures nothing; the cache is a scratch folder).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd /tmp && env -u ANYCL_LIBRARY -u PYTHONPATH -u ANYCL_TUNE_WORKER ANYCL_CACHE_DIR="$scratch" \
   "$OLDPWD/$venv/bin/python" -c '
import anycl
from anycl.layers import Dense
m = anycl.Sequential([Dense(8), Dense(2)], input_shape=(4,))
m.compile()
r = anycl.tune(m, quick=True, progress=lambda p: False, verbose=0)
assert r.stopped, r
print("check-python-package: anycl.tune found the package'"'"'s anycl-tune-worker")')
