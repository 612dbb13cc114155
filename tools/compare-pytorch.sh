#!/usr/bin/env bash
# A reference model's epoch: anycl as a fresh clone trains it (no `anycl tune`; the shipped tuning
# database, or first-use tuning where no entry fits, reported apart from the epoch) beside PyTorch
# on the CPU of the same machine as its users run it (PyPI wheel, default threads and settings), in
# one run. PyTorch goes into build/torch-venv from PyPI.
# Usage: tools/compare-pytorch.sh [--model mlp|cnn|bncnn] [--epochs N] [--limit N] [--isa native|avx2|avx|sse41]
#                                 [--runs N]
#   --epochs  epochs (default 2 for mlp, 3 for cnn and bncnn); the last one is compared
#   --limit   training samples per epoch (default: all for mlp, 1280 for cnn and bncnn)
#   --isa avx2  both limited to AVX2 on an AVX-512 CPU: PoCL's avx2 kernel library
#             (POCL_KERNELLIB_NAME=avx2, device pthread-haswell) and PyTorch's AVX2 paths
#             (ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS, ONEDNN_MAX_CPU_ISA): the AVX2 CPU class
#             on the same cores (not a real AVX2 CPU: same caches and clocks). MKL obeys its variable on
#             Intel's CPUs only: on AMD's, PyTorch's matrix products (the MLP's) are not limited.
#   --isa avx   both limited to AVX: PoCL's avx library (pthread-sandybridge, on the AVX2 entry since
#             2026-12-04) and PyTorch's AVX (oneDNN, MKL; ATen's default level, having none for AVX)
#   --isa sse41 both limited to SSE4.1: PoCL's sse41 library (pthread-penryn, a class no tuning entry
#             names, so the first run tunes on first use) and PyTorch's SSE4 paths (oneDNN SSE41, MKL
#             SSE4_2, ATen's default level). On a non-Intel CPU MKL ignores SSE4_2 but honours
#             MKL_CBWR=COMPATIBLE (its SSE2 branch, 128-bit like SSE4.1, on any CPU), set there.
#   --runs N  N pairs, anycl then PyTorch in turn (default 1); each pair's ratio, then their median
#             (the figure docs/performance.md records: these 2-vCPU machines drift by more than the
#             changes measured, so one pair says little)
# ANYCL_DEVICE picks anycl's device (default pocl).
set -euo pipefail
cd "$(dirname "$0")/.."
model=mlp epochs="" limit="" isa=native runs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --isa) isa=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "compare-pytorch: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
case "$runs" in ''|*[!0-9]*) runs=0 ;; *) runs=$((10#$runs)) ;; esac
[ "$runs" -ge 1 ] || { echo "compare-pytorch: --runs takes a count of at least 1" >&2; exit 2; }
[ "$model" != mlp ] && { epochs=${epochs:-3}; limit=${limit:-1280}; }
epochs=${epochs:-2}
anycl=${ANYCL:-build/tools/anycl}
# First-use tuning runs its candidates in anycl-tune-worker beside the binary: a copied binary without
# it would train untuned (a warning in the log, easy to miss in an A/B comparison).
if [ ! -x "$(dirname "$anycl")/anycl-tune-worker" ]; then
  echo "compare-pytorch: no anycl-tune-worker beside $anycl: copy it there too (first-use tuning needs it)" >&2
  exit 2
fi
venv=build/torch-venv
if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch numpy  # PyPI's wheel (its CUDA build runs on the CPU too)
fi
if [ "$isa" = avx2 ]; then
  export POCL_KERNELLIB_NAME=avx2 ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2
elif [ "$isa" = avx ]; then  # PoCL's sandybridge library (the AVX2 entry); ATen has no AVX level
  export POCL_KERNELLIB_NAME=avx ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=AVX ONEDNN_MAX_CPU_ISA=AVX
elif [ "$isa" = sse41 ]; then  # a class no tuning entry names (PoCL's penryn library)
  export POCL_KERNELLIB_NAME=sse41 ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2 ONEDNN_MAX_CPU_ISA=SSE41
elif [ "$isa" != native ]; then
  echo "compare-pytorch: --isa must be native, avx2, avx or sse41" >&2; exit 2
fi
flags=$(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
# MKL (PyTorch's BLAS: the Dense layers' products) honours MKL_ENABLE_INSTRUCTIONS on Intel's CPUs only
# (Intel's oneMKL developer guide); oneDNN (the convolutions) honours ONEDNN_MAX_CPU_ISA on any CPU.
# Its conditional-reproducibility branch COMPATIBLE (SSE2 without rcpps/rsqrtps) holds on any CPU: the
# SSE4.1 class's width there (the branch also fixes MKL's reductions and scheduling: ~5 % measured).
if [ "$isa" != native ] && ! grep -q -m1 GenuineIntel /proc/cpuinfo; then
  if [ "$isa" = sse41 ]; then
    export MKL_CBWR=COMPATIBLE
    echo "compare-pytorch: not an Intel CPU: MKL ignores MKL_ENABLE_INSTRUCTIONS here; MKL_CBWR=COMPATIBLE" \
      "limits PyTorch's Dense products to MKL's SSE2 branch (128-bit, as SSE4.1)" >&2
  else
    echo "compare-pytorch: not an Intel CPU: MKL ignores MKL_ENABLE_INSTRUCTIONS here, so PyTorch's Dense products" \
      "run at this CPU's full ISA (anycl's are limited to $isa); its convolutions (oneDNN) are limited" >&2
  fi
fi
metrics=build/compare-pytorch-anycl.csv
limit_flag=()
[ -n "$limit" ] && limit_flag=(--limit "$limit")
echo "== CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), flags: ${flags}; --isa $isa"
ratios=()
one_pair() {
  rm -f "$metrics"
  echo "== anycl train --model $model --epochs $epochs ${limit_flag[*]} on ${ANYCL_DEVICE:=pocl} ($(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg))"
  ANYCL_DEVICE=$ANYCL_DEVICE "$anycl" train --model "$model" --epochs "$epochs" "${limit_flag[@]}" --metrics "$metrics" \
    | grep -E '^(device|first|tuned|first-use)|tuning' || true
  anycl_sps=$(awk -F, 'END { printf "%.1f", $NF }' "$metrics")
  anycl_acc=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "test_acc") c = i } END { printf "%.4f", $c }' "$metrics")
  echo "== PyTorch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') on the CPU${MKL_CBWR:+ (MKL_CBWR=$MKL_CBWR)} ($(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg))"
  out=$("$venv/bin/python" tools/pytorch_reference.py --model "$model" --epochs "$epochs" "${limit_flag[@]}")
  echo "$out"
  torch_sps=$(echo "$out" | tail -1 | sed -E 's/.*"samples_per_second": ([0-9.]+).*/\1/')
  torch_acc=$(echo "$out" | tail -1 | sed -E 's/.*"test_acc": ([0-9.]+).*/\1/')
  samples=${limit:-60000}
  ratio=$(awk -v a="$anycl_sps" -v t="$torch_sps" 'BEGIN { printf "%.2f", t / a }')
  echo "epoch $epochs ($model, $samples samples, --isa $isa): anycl $anycl_sps samples/s ($(awk -v s="$samples" -v r="$anycl_sps" 'BEGIN { printf "%.2f", s / r }') s), PyTorch $torch_sps samples/s ($(awk -v s="$samples" -v r="$torch_sps" 'BEGIN { printf "%.2f", s / r }') s); anycl time / PyTorch time = $ratio"
  echo "test accuracy after epoch $epochs: anycl $anycl_acc, PyTorch $(awk -v a="$torch_acc" 'BEGIN { printf "%.4f", a }')"
  ratios+=("$ratio")
}
for ((run = 1; run <= runs; ++run)); do
  [ "$runs" -gt 1 ] && echo "== pair $run of $runs"
  one_pair
done
if [ "$runs" -gt 1 ]; then
  median=$(printf '%s\n' "${ratios[@]}" | LC_ALL=C sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  echo "anycl time / PyTorch time over $runs pairs ($model, --isa $isa): ${ratios[*]}; median $median"
fi
