#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs every test on the OpenCL CPU device (PoCL) through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export ANYCL_DEVICE=${ANYCL_DEVICE:-pocl}
cd build
ctest --output-on-failure --timeout 900 -j "$(nproc)"
