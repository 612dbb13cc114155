#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs the main job on the best OpenCL device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
build/tools/anycl devices
build/samples/gemm 1024 1024 1024
