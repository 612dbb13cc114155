#!/usr/bin/env bash
# Installs what anycl needs on Debian 12 (as root; only what is missing) and builds it in
# Release into build/. Idempotent and quiet on success; used by run-main.sh and run-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build pkg-config ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd
          libclblast-dev libboost-dev libfmt-dev zlib1g-dev doctest-dev nlohmann-json3-dev libopenblas-dev
          dataset-fashion-mnist libopenmpi-dev openmpi-bin
          librsvg2-bin libprotobuf-dev protobuf-compiler libonnx-dev python3-venv  # plot test; ONNX export
          ccache)  # the Python package's build (tools/check-python-package.sh) reuses this build's objects
source tools/lib/debian-packages.sh
install_debian_packages setup "${packages[@]}"

# onnxruntime (PyPI) for the ONNX export test, in a venv of its own (Debian's Python is externally managed);
# scikit-learn for the data set that samples/python/breast_cancer_binary.py (and its test) trains on.
if ! build/onnx-venv/bin/python3 -c "import onnxruntime, onnx, numpy, pytest, sklearn" 2>/dev/null; then
  log=$(mktemp)
  if ! { /usr/bin/python3 -m venv build/onnx-venv &&
         build/onnx-venv/bin/pip install -q onnxruntime onnx numpy pytest scikit-learn; } \
      >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: could not install onnxruntime and scikit-learn into build/onnx-venv (above); their tests will be skipped" >&2
  fi
  rm -f "$log"
fi

build_type=${ANYCL_BUILD_TYPE:-Release}
launcher=()  # ccache, where installed, makes rebuilds in several checkouts cheap (optional)
# With ccache, no precompiled library header: the Python package's build (check-python-package.sh) then
# takes the library's objects from the cache, which it cannot for objects compiled against a header
# precompiled in another tree (CMakeLists.txt, ANYCL_LIBRARY_PCH).
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DANYCL_LIBRARY_PCH=OFF); fi
log=$(mktemp)
if ! { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${launcher[@]}" && cmake --build build --parallel; } >"$log" 2>&1; then
  grep -E -B2 -A12 'error|Error' "$log" | head -80 >&2 || cat "$log" >&2
  echo "setup: the build failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
