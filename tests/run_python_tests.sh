#!/usr/bin/env bash
# CTest's python_package: pytest over python/tests with PYTHON (the venv tools/setup.sh makes, with
# numpy and pytest). ANYCL_LIBRARY, ANYCL_CLI and PYTHONPATH come from CTest. Exit 77 (skipped)
# when that Python lacks numpy or pytest — a failure under CI=true.
set -euo pipefail
python=$1 tests=$2
if ! "$python" -c 'import numpy, pytest' 2>/dev/null; then
  echo "[anycl test skipped] no Python with numpy and pytest at $python (tools/setup.sh makes build/onnx-venv)"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
# The tests compare the package with `anycl train`: both train with the same CLBlast parameters only
# when neither the command nor the package's fit does first-use tuning (python/tests/test_tuning.py
# turns it on in processes of its own).
export ANYCL_AUTOTUNE=off
exec "$python" -m pytest -q -p no:cacheprovider "$tests"
