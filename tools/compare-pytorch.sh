#!/usr/bin/env bash
# The reference model's epoch: anycl (fresh defaults: no `anycl tune` file, the shipped tuning
# database) beside PyTorch on the CPU of the same machine, in one run. PyTorch goes into
# build/torch-venv from PyPI. Usage: tools/compare-pytorch.sh [EPOCHS] (default 2;
# the last epoch is compared). ANYCL_DEVICE picks anycl's device (default pocl).
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-2}
anycl=${ANYCL:-build/tools/anycl}
venv=build/torch-venv
if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch numpy  # PyPI's wheel (its CUDA build runs on the CPU too)
fi
# OpenBLAS told the CPU type, as `anycl bench` does for its host baseline (on an AVX-512 CPU).
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi
# PyTorch's OpenMP threads spin while they wait; on a shared, oversubscribed machine that made its
# epoch 146 s instead of 5 s here (2026-11-23, load average 16 on 2 vCPUs). Passive waiting is fair
# to both; set OMP_WAIT_POLICY yourself to measure otherwise.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
metrics=build/compare-pytorch-anycl.csv
rm -f "$metrics"
echo "== anycl train --epochs $epochs on ${ANYCL_DEVICE:=pocl} ($(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg))"
ANYCL_DEVICE=$ANYCL_DEVICE "$anycl" train --epochs "$epochs" --metrics "$metrics" --quiet
anycl_s=$(awk -F, 'END { printf "%.3f", 60000 / $NF }' "$metrics")
echo "== PyTorch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') on the CPU ($(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg))"
out=$("$venv/bin/python" tools/pytorch_mlp.py --epochs "$epochs")
echo "$out"
torch_s=$(echo "$out" | tail -1 | sed -E 's/.*"train_seconds": ([0-9.]+).*/\1/')
echo "epoch $epochs training time: anycl ${anycl_s} s, PyTorch ${torch_s} s; anycl / PyTorch = $(awk -v a="$anycl_s" -v t="$torch_s" 'BEGIN { printf "%.2f", a / t }')"
