#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs the main job: the reference MLP (Keras' mnist_mlp:
# 784-512-512-10, ReLU, dropout 0.2, RMSprop, batch 128, 20 epochs) on Fashion-MNIST on the
# best OpenCL device. Extra arguments go to `anycl train` (e.g. --epochs 5, --device cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# Not exec: anycl's process clock starts at its own start, so its "start-up: first training step
# finished … s after the process started" line does not count the set-up above.
build/tools/anycl train --metrics build/main-run.csv --save build/main-run.anycl "$@"
