#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs the tests through CTest on each OpenCL implementation CI
# covers: every test on PoCL, then all but the host-behaviour tests (labels "cli" and "python")
# on Intel's CPU runtime (installed under build/ by install-intel-opencl.sh).
# ANYCL_DEVICE=pocl (or intel) runs one pass only. Under CI=true a missing implementation fails.
# Then the Python package once as a user installs it (pip install . into a fresh venv; on PoCL).
# The Oclgrind checks (label oclgrind) have their own script, run-oclgrind.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh

passes=(pocl intel)
if [ -n "${ANYCL_DEVICE:-}" ]; then passes=("$ANYCL_DEVICE"); fi
vendors=""
if [[ " ${passes[*]} " == *" intel "* ]]; then
  if ! vendors=$(bash tools/install-intel-opencl.sh); then
    if [ "${CI:-}" = true ]; then exit 1; fi
    echo "run-tests: Intel's OpenCL runtime could not be installed (above); its pass is skipped" >&2
    passes=("${passes[@]/intel/}")
  fi
fi
cd build
for device in ${passes[@]}; do
  echo "run-tests: the tests on ANYCL_DEVICE=$device" >&2
  start=$SECONDS
  if [ "$device" = intel ]; then
    # Not the "cli" tests (host behaviour: the anycl command's flags, files, signals, tuning's child
    # processes) nor "python" (the package over the C API), tests/CMakeLists.txt: they were over half
    # of this pass's time and test nothing that depends on the OpenCL implementation.
    OCL_ICD_VENDORS=$vendors ANYCL_DEVICE=intel ctest -LE '^(oclgrind|cli|python)$' --output-on-failure --timeout 900 -j "$(nproc)"
  else
    # anycl stores no program binaries for PoCL on its own (PoCL keeps a cache of its own, docs/tuning.md);
    # stored once here, every test process's runtime loads them instead of running PoCL's compiler front
    # end for each program (0.1 s instead of 0.5 s a process, some 400 processes).
    ANYCL_DEVICE=$device ./tools/anycl cache warm || echo "run-tests: no cache warmed (above); each test compiles" >&2
    ANYCL_DEVICE=$device ctest -LE oclgrind --output-on-failure --timeout 900 -j "$(nproc)"
  fi
  echo "run-tests: ANYCL_DEVICE=$device passed in $((SECONDS - start)) s" >&2
done
if [[ " ${passes[*]} " == *" pocl "* ]]; then
  start=$SECONDS
  ANYCL_DEVICE=pocl bash ../tools/check-python-package.sh
  echo "run-tests: the pip-installed Python package passed in $((SECONDS - start)) s" >&2
fi
