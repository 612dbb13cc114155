#!/usr/bin/env bash
# CI: anycl's kernel tests and a short training run (128 images, batch 32) under Oclgrind, a
# simulator of a GPU-like device that checks every access: data races, out-of-bounds accesses and
# API misuse; then a training run on 12x12 crops with Oclgrind's uninitialised-value checks.
# Any report fails, as do a fatal simulator error and a failing test. About 2.5 minutes of CPU time.
# Logs: build/oclgrind/. Installs oclgrind (Debian) when missing. CTest runs it as the test
# oclgrind_kernel_checks (label oclgrind) with --no-setup: then a missing oclgrind skips (77),
# or fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
setup=1
for arg in "$@"; do
  case $arg in
    --no-setup) setup=0 ;;
    *) echo "run-oclgrind: unknown option $arg (use --no-setup)" >&2; exit 2 ;;
  esac
done
if [ $setup = 1 ]; then
  bash tools/setup.sh
  if ! command -v oclgrind >/dev/null; then
    [ "$(id -u)" -eq 0 ] || { echo "run-oclgrind: apt-get install oclgrind (as root)" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq oclgrind >/dev/null
  fi
elif ! command -v oclgrind >/dev/null; then
  echo "run-oclgrind: oclgrind is not installed (apt-get install oclgrind, or run tools/run-oclgrind.sh)" >&2
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 77
fi
out=build/oclgrind
rm -rf "$out" && mkdir -p "$out/cache"
export ANYCL_CACHE_DIR=$PWD/$out/cache
# Under Oclgrind the simulator is the only OpenCL device: a device exported for the other runs
# (ANYCL_DEVICE=intel when the whole suite runs against Intel's runtime) must not leak in.
unset ANYCL_DEVICE
kernel_tests='*test_activation.cpp,*test_dropout.cpp,*test_dense_dropout.cpp,*test_lane_elementwise.cpp,*test_softmax_xent.cpp,*test_elementwise_loss.cpp,*test_gather.cpp,*test_transpose.cpp,*test_init.cpp,*test_optimizer.cpp,*test_conv2d.cpp,*test_conv_pool.cpp,*test_maxpool2d.cpp,*test_batchnorm.cpp,*test_batchnorm_activation.cpp,*test_batchnorm_split.cpp,*test_batchnorm_pool.cpp,*test_pool.cpp,*test_peak_chains.cpp,*test_bench_triad.cpp'
# The training run's data: the first 128 training and 64 test images of the default data set (the
# simulator checks every access, so the end-of-epoch evaluation of 10,000 test images would take hours).
# The uninitialised-value pass (several times slower per access) trains on the first 64 of them and
# evaluates the first 32, cropped to their central 12x12 pixels: the same kernels and GEMM kinds, two
# steps and two one-batch evaluations (end of epoch, then the test set), a first layer 5x smaller.
data=$out/data data_small=$out/data-12x12
mkdir -p "$data" "$data_small"
python3 - "${ANYCL_DATA:-/usr/share/datasets/fashion-mnist}" "$data" "$data_small" <<'PY'
import gzip, os, struct, sys
source, target, small = sys.argv[1:4]
for split, count, small_count in (("train", 128, 64), ("t10k", 64, 32)):
    for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
        name = f"{split}-{kind}"
        path = os.path.join(source, name)
        raw = gzip.open(path + ".gz").read() if os.path.exists(path + ".gz") else open(path, "rb").read()
        dims = raw[3]
        shape = list(struct.unpack(f">{dims}I", raw[4:4 + 4 * dims]))
        row = 1
        for d in shape[1:]:
            row *= d
        shape[0] = count
        body = raw[4 + 4 * dims:4 + 4 * dims + count * row]
        open(os.path.join(target, name), "wb").write(raw[:4] + struct.pack(f">{dims}I", *shape) + body)
        shape[0] = small_count
        body = body[:small_count * row]
        if dims == 3:  # images: the central 12x12
            h, w = shape[1], shape[2]
            top, left = (h - 12) // 2, (w - 12) // 2
            body = b"".join(body[i * row + r * w + left:i * row + r * w + left + 12]
                            for i in range(small_count) for r in range(top, top + 12))
            shape = [small_count, 12, 12]
        open(os.path.join(small, name), "wb").write(raw[:4] + struct.pack(f">{dims}I", *shape) + body)
PY
train=(build/tools/anycl train --data "$data" --batch 32 --layers 32 --epochs 1 --quiet --no-autotune)
train_small=(build/tools/anycl train --data "$data_small" --batch 32 --layers 32 --epochs 1 --quiet --no-autotune)

status=0
run() {  # name, oclgrind flags…, --, command…: runs under Oclgrind, then sorts its reports
  local name=$1 start=$SECONDS flags=()
  shift
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  if ! oclgrind "${flags[@]}" "$@" >"$out/$name.log" 2>&1; then
    echo "run-oclgrind: $name failed under Oclgrind (see $out/$name.log):" >&2
    grep -E 'ERROR|FATAL|error:' "$out/$name.log" | head -20 >&2 || true
    status=1
  fi
  # A report is a line without indentation followed by "\tKernel: NAME" (or, for an API error,
  # "\tFunction: clCall"); counted per kind and kernel.
  awk '
    /^[A-Z]/ && !/^TEST CASE/ { what = $0; next }
    /^\t(Kernel|Function): / && what != "" { sub(/address 0x[0-9a-f]+/, "address …", what); count[what " | " $2]++; what = "" }
    END { for (k in count) print count[k] "\t" k }
  ' "$out/$name.log" | sort -rn >"$out/$name.reports"
  cp "$out/$name.reports" "$out/$name.findings"
  if [ -s "$out/$name.findings" ]; then
    echo "run-oclgrind: $name — Oclgrind reports (count, report | kernel):" >&2
    cat "$out/$name.findings" >&2
    status=1
  fi
  echo "run-oclgrind: $name done in $((SECONDS - start)) s" >&2
}

# The gate: races, out-of-bounds accesses and API misuse — any report fails.
# The kernel tests live in two programs: anycl_core_tests (no CLBlast) and anycl_tests (Conv2D's GEMMs).
# --duration=true: each test case's seconds in its log (build/oclgrind/*.log), to see where the stage's time goes.
# Not the dropout statistics over a million elements (27 s here): a mask's kept fraction is the PoCL and Intel
# passes' question; its kernel runs under the simulator in the other dropout tests. Nor the peak's timed
# runs (millions of multiply-adds a work-item): its kernel runs under the simulator in the check beside it.
run kernel-tests --data-races --check-api -- build/tests/anycl_core_tests --source-file="$kernel_tests" --duration=true \
  --test-case-exclude="dropout keeps about 1-rate of a large tensor*,the measured peak names*"
run kernel-tests-gemm --data-races --check-api -- build/tests/anycl_tests --source-file="$kernel_tests" --duration=true
run train --data-races --check-api -- "${train[@]}"
# The uninitialised-value pass. -cl-opt-disable: Oclgrind 21.10's uninitialised-value plugin stops a
# work-item at LLVM's `freeze` instruction, which the optimiser emits for i / n beside i % n.
# keep_buffers.so: the plugin keeps a released buffer's shadow state for the next buffer Oclgrind
# puts in the same slot, which then reads as uninitialised past the old buffer's size
# (tools/oclgrind/slot_reuse_repro.c); with releases kept, every buffer gets a fresh slot and starts
# uninitialised, and no report is filtered. The gate above runs with real releases.
export OCLGRIND_BUILD_OPTIONS=-cl-opt-disable ANYCL_CACHE_DIR=$PWD/$out/cache-opt-disable  # key omits it
cc -shared -fPIC -O1 -o "$out/keep_buffers.so" tools/oclgrind/keep_buffers.c
# oclgrind puts its runtime first in LD_PRELOAD; the shim must come before it to replace clReleaseMemObject.
keep_buffers=(sh -c 'LD_PRELOAD="$0:$LD_PRELOAD" exec "$@"' "$PWD/$out/keep_buffers.so")
# The shim checked on the reproducer: with it, no report for a buffer written in full after a slot
# reuse (mode 1) and all 16 for one never written (mode 2: the pass still sees what is uninitialised);
# without it, the false positive (once an Oclgrind release no longer shows it, the shim can go).
cc -o "$out/slot_reuse_repro" tools/oclgrind/slot_reuse_repro.c -lOpenCL
reports() { grep -c '^Uninitialized value' "$out/slot-reuse-$1.log" || true; }
for mode in 1 2; do
  oclgrind --uninitialized "${keep_buffers[@]}" "$out/slot_reuse_repro" $mode >"$out/slot-reuse-kept$mode.log" 2>&1 || true
done
oclgrind --uninitialized "$out/slot_reuse_repro" 1 >"$out/slot-reuse-plain1.log" 2>&1 || true
if [ "$(reports kept1)" != 0 ] || [ "$(reports kept2)" != 16 ] || ! grep -q '^mode 1: sum 16' "$out/slot-reuse-kept1.log"; then
  echo "run-oclgrind: with keep_buffers.so slot_reuse_repro should give 0 reports (mode 1) and 16 (mode 2)," \
    "got $(reports kept1) and $(reports kept2) (see $out/slot-reuse-kept*.log)" >&2
  status=1
fi
[ "$(reports plain1)" != 0 ] ||
  echo "run-oclgrind: this Oclgrind no longer reports slot_reuse_repro: keep_buffers.so may be unneeded" >&2
run train-uninitialized --uninitialized --check-api -- "${keep_buffers[@]}" "${train_small[@]}"
exit $status
