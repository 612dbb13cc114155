#!/usr/bin/env bash
# anycl on an NVIDIA GPU machine lent through the `device` tool (see ../shared/gpu/README.md): the
# binaries are built here and run there, where nothing can be installed.
#   tools/gpu-check.sh pack   here, after a Release build: copies the CLI, libanycl, the test
#                             binaries, every library they load (but the C/C++ runtime) and the
#                             Fashion-MNIST files into .gpu/ (git-ignored; carry it)
#   tools/gpu-check.sh run    there: registers NVIDIA's OpenCL driver with the carried ICD loader,
#                             then, each step bounded so the whole fits one call (GPU_CHECK_SECONDS,
#                             default 540), the parts in GPU_CHECK_PARTS (default all, in order):
#                               gemm: CLBlast GEMM at the models' shapes and 4096³ with CLBlast's own
#                                 database, beside cuBLAS (PyTorch, TF32 off);
#                               ext: the device's OpenCL extensions (command buffers?);
#                               pytorch: both reference models in PyTorch, 3 epochs;
#                               breakdown: `bench mlp|cnn --breakdown`, CLBlast's own parameters
#                                 (the CNN's trace as cnn-profile.json);
#                               variants: both models trained with one database entry per knob
#                                 setting (GPU_CHECK_VARIANTS, "name=entry lines|…");
#                               tune-4096: `anycl tune` at 4096³ alone, then the GEMM beside cuBLAS;
#                               xgemm-sets: Xgemm sets (GPU_CHECK_XGEMM) at 4096³, the best kept;
#                               combined: both models with knob entries together and that set;
#                               tune-full: `anycl tune --model mlp,cnn` beyond the shortlist, the
#                                 GEMMs and both models again;
#                               tune: `anycl tune --quick --model mlp,cnn` and the GEMMs again;
#                               train: the reference MLP (20 epochs) and CNN as a user runs them
#                                 (first-use tuning first), beside PyTorch on the same GPU;
#                               clblast-train: the same with CLBlast's own parameters;
#                               ab: this build beside a baseline build (GPU_CHECK_BASELINE at
#                                 pack time), alternating: the MLP's step breakdown and its training
#                                 (5 epochs), the device's database entry in effect;
#                               shipped: the device's own database entry against CLBlast's own
#                                 parameters (both models, 4096³ beside cuBLAS), PyTorch's models;
#                                 with the entry also `bench mlp --breakdown` and `bench cnn` (its
#                                 figure beside train's; each Conv2D forward algorithm in turn);
#                               bncnn: the BatchNorm CNN (`--model bncnn`) and the same CNN
#                                 without BatchNorm, alternating, PyTorch's BatchNorm CNN, one
#                                 profiled epoch (bncnn-profile.json);
#                               accuracy: the BatchNorm CNN's test accuracy over seeds
#                                 (GPU_CHECK_SEEDS, GPU_CHECK_ACCURACY_EPOCHS), anycl beside PyTorch
#                                 with its own and with Keras' initialisers; run beside the tests
#                                 (accuracy only: no timing is read from it);
#                               tests: both test programs with the GPU selected (anycl_tests in
#                                 GPU_CHECK_TEST_SHARDS parallel shards, default 4).
#                             Logs go to $OUT (the device tool's folder).
# GPU_CHECK_DEVICE picks another device (a dry run here: GPU_CHECK_DEVICE=pocl GPU_CHECK_EPOCHS=1
# GPU_CHECK_LIMIT=512: the bncnn and accuracy parts train on that many images).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

pack() {
  set -e
  rm -rf .gpu && mkdir -p .gpu/lib .gpu/bin .gpu/tests .gpu/data
  cp build/tools/anycl build/anycl-tune-worker .gpu/bin/  # the worker: tuning's child processes
  cp -P build/libanycl.so* .gpu/lib/
  cp build/tests/anycl_core_tests build/tests/anycl_tests .gpu/tests/
  # Everything the binaries load, but the C and C++ runtimes (the machine's own are newer).
  ldd build/tools/anycl build/tests/anycl_tests build/anycl-tune-worker build/libanycl.so.*.*.* | awk '/=> \// { print $3 }' | sort -u |
    grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libanycl)\.so' |
    while read -r lib; do cp -L "$lib" .gpu/lib/; done
  cp /usr/share/datasets/fashion-mnist/*.gz .gpu/data/
  # GPU_CHECK_BASELINE=DIR: another build's CLI and libanycl (DIR/anycl, DIR/libanycl.so*), run beside
  # this one by the `ab` part.
  if [ -n "${GPU_CHECK_BASELINE:-}" ]; then
    mkdir -p .gpu/baseline && cp "$GPU_CHECK_BASELINE"/anycl .gpu/baseline/ && cp -P "$GPU_CHECK_BASELINE"/libanycl.so* .gpu/baseline/
  fi
  # The carried tree may hold 64 MiB: OpenBLAS alone is 36 MB, a fifth of that compressed.
  local parts=(lib bin tests)
  [ -d .gpu/baseline ] && parts+=(baseline)
  tar -C .gpu -cJf .gpu/binaries.tar.xz "${parts[@]}" && rm -rf .gpu/lib .gpu/bin .gpu/tests .gpu/baseline
  du -sh .gpu
}

# run: one step, its output appended to the log, killed when its time or the whole budget is spent.
step() {
  local name=$1 limit=$2
  shift 2
  local to=$log
  if [ "$1" = --to ]; then to=$2; shift 2; fi
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 15 ]; then
    echo "== $name: skipped, the check's time is spent" | tee -a "$log"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (at ${SECONDS} s, limit ${limit} s): $*" | tee -a "$log"
  local t0=$SECONDS
  timeout --kill-after=5 "$limit" "$@" >>"$to" 2>>"$log"
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$log"
}

run() {
  out=${OUT:-build/gpu-check}
  mkdir -p "$out"
  log=$out/gpu-check.log
  : >"$log"; rm -f "$out"/*.json "$out"/*.csv
  deadline=${GPU_CHECK_SECONDS:-540}
  device=${GPU_CHECK_DEVICE:-nvidia}
  epochs=${GPU_CHECK_EPOCHS:-20} sizes=${GPU_CHECK_SIZES:-1024,4096}
  parts=${GPU_CHECK_PARTS:-ext,gemm,pytorch,breakdown,variants,tune-4096,tune-full,train,clblast-train,tests}
  root=$PWD
  # Unpacked with Python's tarfile: the machine may have no xz.
  [ -d .gpu/lib ] || (cd .gpu && python3 -m tarfile -e binaries.tar.xz .) || exit 1
  if [ "$device" = nvidia ]; then
    lib=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/local/nvidia/lib/libnvidia-opencl.so.1 \
      /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 2>/dev/null | head -1)
    echo "nvidia opencl: ${lib:-NOT FOUND}" | tee -a "$log"
    mkdir -p /tmp/icd && echo "$lib" >/tmp/icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/icd
    nvidia-smi -L >>"$log" 2>&1
    # The test binaries hold this checkout's path from the build (/work/main) and the data set's.
    if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$root" /work/main; fi
    if [ ! -e /usr/share/datasets/fashion-mnist ]; then
      mkdir -p /usr/share/datasets && ln -s "$root/.gpu/data" /usr/share/datasets/fashion-mnist
    fi
    mkdir -p build/tools build/tests
    cp .gpu/bin/anycl build/tools/ && cp -P .gpu/lib/libanycl.so* build/ && cp .gpu/tests/* build/tests/
    for d in build build/tools build/tests; do cp .gpu/bin/anycl-tune-worker "$d/"; done  # beside each program
  fi
  export LD_LIBRARY_PATH=$root/.gpu/lib:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
  export ANYCL_DATA=${ANYCL_DATA:-$root/.gpu/data} ANYCL_DEVICE=$device PYTHONUNBUFFERED=1
  [ -d "$ANYCL_DATA" ] || ANYCL_DATA=/usr/share/datasets/fashion-mnist
  ldd build/tools/anycl | grep 'not found' | tee -a "$log"
  python=${GPU_CHECK_PYTHON:-python3}
  torch_device=cuda
  [ "$device" = nvidia ] || torch_device=cpu
  anycl=build/tools/anycl

  # Each part in a cache folder of its own, so that none sees another's tuning.
  cache() { local d=/tmp/gpu-check-cache-$1; mkdir -p "$d"; echo "$d"; }
  # use_entry PART NAME=LINES: ANYCL_TUNING_DATABASE set to a folder holding one entry of LINES for
  # this device's platform (GPU_CHECK_PLATFORM), or off when LINES is empty; NAME is set for the caller.
  use_entry() {
    name=${2%%=*}
    local lines=${2#*=} folder=/tmp/gpu-check-$1-${2%%=*}
    if [ -z "$lines" ]; then export ANYCL_TUNING_DATABASE=off; return; fi
    mkdir -p "$folder"
    printf 'anycl-tuning-database 1\nmatch platform=%s\n%s\n' "${GPU_CHECK_PLATFORM:-NVIDIA}" "$lines" \
      >"$folder/$name.txt"
    export ANYCL_TUNING_DATABASE=$folder
  }
  has() { [[ ",$parts," == *",$1,"* ]]; }
  local limit=()
  [ -n "${GPU_CHECK_LIMIT:-}" ] && limit=(--limit "$GPU_CHECK_LIMIT")
  step devices 30 "$anycl" devices
  if has ext; then  # what the driver offers beside the core: command buffers, subgroups, fp16
    step "opencl extensions" 20 "$python" tools/cl_extensions.py
  fi
  if has gemm; then
    export XDG_CACHE_HOME=$(cache gemm)
    step "gemm, CLBlast's own parameters (mlp)" 60 --to "$out/gemm-clblast.json" \
      "$anycl" bench gemm --model mlp --sizes "$sizes" --json
    step "gemm beside PyTorch (mlp, CLBlast's own parameters)" 60 \
      "$python" tools/pytorch_gemm.py "$out/gemm-clblast.json" --device "$torch_device"
    step "gemm, CLBlast's own parameters (cnn)" 60 "$anycl" bench gemm --model cnn --sizes 1024
  fi
  if has pytorch; then  # the reference models in PyTorch on the same device, few epochs
    step "PyTorch mlp" 90 "$python" tools/pytorch_reference.py --model mlp --epochs 3 --device "$torch_device"
    step "PyTorch cnn" 60 "$python" tools/pytorch_reference.py --model cnn --epochs 3 --device "$torch_device"
  fi
  if has tune; then
    export XDG_CACHE_HOME=$(cache tune)
    step "quick tuning for both models (how database entries are made)" 120 \
      "$anycl" tune --quick --model mlp,cnn --minutes 1.2
    step "tuning chosen" 10 "$anycl" tune --export
    step "gemm, tuned (mlp)" 60 --to "$out/gemm-tuned.json" "$anycl" bench gemm --model mlp --sizes "$sizes" --json
    step "gemm beside PyTorch (mlp, tuned)" 60 "$python" tools/pytorch_gemm.py "$out/gemm-tuned.json" \
      --device "$torch_device"
    step "gemm, tuned (cnn)" 60 "$anycl" bench gemm --model cnn --sizes 1024
    step "mlp step breakdown" 40 "$anycl" bench mlp --breakdown --repeats 2
  fi
  if has breakdown; then  # where a step's time goes with CLBlast's own parameters
    export XDG_CACHE_HOME=$(cache breakdown) ANYCL_TUNING=off
    step "mlp step breakdown, CLBlast's own parameters" 40 "$anycl" bench mlp --breakdown --repeats 2
    # conv 1 (patch 9) as direct kernels beside its GEMMs (automatic keeps GEMMs on a GPU until measured)
    step "cnn step breakdown, CLBlast's own parameters" 90 "$anycl" bench cnn --profile "$out/cnn-profile.json" \
      --repeats 2 --conv-forward default,direct,convgemm
    unset ANYCL_TUNING
  fi
  if has bncnn; then  # the BatchNorm CNN (issue 46) beside PyTorch, and its cost beside the CNN without it
    export XDG_CACHE_HOME=$(cache bncnn)
    local round
    for round in 1 2; do
      step "bncnn $round" 60 "$anycl" train --model bncnn --epochs 3 --no-autotune "${limit[@]}"
      step "cnn without BatchNorm $round" 60 "$anycl" train --layers conv32x3,conv64x3,pool2,conv64x3,globalavgpool \
        --dropout 0 --optimizer adam --epochs 3 --no-autotune "${limit[@]}"
    done
    step "bncnn, one profiled epoch" 60 "$anycl" train --model bncnn --epochs 1 --limit "${GPU_CHECK_LIMIT:-12800}" \
      --no-autotune --quiet --profile "$out/bncnn-profile.json"
    step "PyTorch bncnn" 90 "$python" tools/pytorch_reference.py --model bncnn --epochs 3 --device "$torch_device" \
      "${limit[@]}"
  fi
  if has variants; then  # one database entry per knob setting (tuning/*.txt format), the CNN and MLP
    # trained with each: which of anycl's own choices suit this device (GPU_CHECK_VARIANTS: name=lines)
    export XDG_CACHE_HOME=$(cache variants)  # no `anycl tune` file there: the entry applies
    local variants=${GPU_CHECK_VARIANTS:-"own=|slices128=kernel anyclConv DW_SLICES=128|slices1=kernel anyclConv DW_SLICES=1|slices16x=kernel anyclConv BATCHED_DW=0 DW_SLICES=16|indirect=kernel GemmRoutine XGEMM_MIN_INDIRECT_SIZE=1|direct=kernel GemmRoutine XGEMM_MIN_INDIRECT_SIZE=1024|tdx=kernel anyclDense TRANSPOSED_DX=1"}
    local spec name
    IFS='|' read -r -a specs <<<"$variants"
    for spec in "${specs[@]}"; do
      use_entry variants "$spec"
      step "variant $name: cnn" 45 "$anycl" train --model cnn --epochs "${GPU_CHECK_VARIANT_EPOCHS:-3}" --no-autotune
      step "variant $name: mlp" 30 "$anycl" train --epochs "${GPU_CHECK_VARIANT_EPOCHS:-3}" --no-autotune
    done
    unset ANYCL_TUNING_DATABASE
  fi
  if has xgemm-sets; then  # candidate indirect Xgemm sets (GPU_CHECK_XGEMM: "KEY=V …|…") timed at 4096³ as
    # database entries (each checked exact at the MLP's shapes first); the fastest is kept for `combined`
    export XDG_CACHE_HOME=$(cache xgemm-sets)
    local sets i=0 gflops best_gflops=0 set
    IFS='|' read -r -a sets <<<"${GPU_CHECK_XGEMM:-}"
    for set in "${sets[@]}"; do
      i=$((i + 1))
      mkdir -p "/tmp/gpu-check-xgemm-$i"
      printf 'anycl-tuning-database 1\nmatch platform=%s\nkernel Xgemm %s\n' "${GPU_CHECK_PLATFORM:-NVIDIA}" "$set" \
        >"/tmp/gpu-check-xgemm-$i/xgemm$i.txt"
      ANYCL_TUNING_DATABASE=/tmp/gpu-check-xgemm-$i step "xgemm set $i: $set" 45 --to "$out/xgemm-$i.txt" \
        "$anycl" bench gemm --model mlp --sizes 4096 --repeats 3
      gflops=$(awk '$1 == "4096³" { print int($6) }' "$out/xgemm-$i.txt" | head -1)
      echo "xgemm set $i at 4096³: ${gflops:-none} GFLOP/s ($(grep -o 'note: CLBlast.*' "$out/xgemm-$i.txt"))" | tee -a "$log"
      grep -q 'note: CLBlast: tuned parameters from anycl' "$out/xgemm-$i.txt" || gflops=  # refused: defaults ran
      if [ -n "$gflops" ] && [ "$gflops" -gt "$best_gflops" ]; then best_gflops=$gflops best_xgemm=$set; fi
      rm -f "$out/xgemm-$i.txt"
    done
    echo "xgemm best at 4096³: ${best_gflops} GFLOP/s: ${best_xgemm:-none}" | tee -a "$log"
  fi
  if has combined; then  # knob settings together, the best Xgemm set among them, both models and PyTorch's CNN
    export XDG_CACHE_HOME=$(cache combined)
    local conv="kernel anyclConv DW_SLICES=128"
    local entries=("own=" "s128=$conv")
    best_xgemm=${best_xgemm:-${GPU_CHECK_BEST_XGEMM:-}}
    entries+=("s128-direct=$conv"$'\n'"kernel GemmRoutine XGEMM_MIN_INDIRECT_SIZE=1024")
    if [ -n "${best_xgemm:-}" ]; then
      entries+=("s128-xgemm=$conv"$'\n'"kernel Xgemm $best_xgemm")
      entries+=("s128-large-xgemm=$conv"$'\n'"large kernel Xgemm $best_xgemm")
    fi
    for spec in "${entries[@]}"; do
      use_entry combined "$spec"
      step "combined $name: cnn" 45 "$anycl" train --model cnn --epochs 3 --no-autotune
      step "combined $name: mlp" 30 "$anycl" train --epochs 5 --no-autotune
      if [ "$name" = s128-xgemm ]; then
        step "gemm, $name" 60 --to "$out/gemm-best.json" "$anycl" bench gemm --model mlp --sizes "$sizes" --json
        step "gemm beside PyTorch, $name" 60 "$python" tools/pytorch_gemm.py "$out/gemm-best.json" --device "$torch_device"
      fi
    done
    unset ANYCL_TUNING_DATABASE
    step "PyTorch cnn" 60 "$python" tools/pytorch_reference.py --model cnn --epochs 3 --device "$torch_device"
    step "PyTorch mlp" 60 "$python" tools/pytorch_reference.py --model mlp --epochs 5 --device "$torch_device"
  fi
  if has ab && [ -x .gpu/baseline/anycl ]; then  # this build against the baseline, alternating, same cache rules
    local round which
    for round in 1 2; do
      for which in baseline this; do
        local cli=$anycl ld=$LD_LIBRARY_PATH
        [ "$which" = baseline ] && cli=.gpu/baseline/anycl ld=$root/.gpu/baseline:$LD_LIBRARY_PATH
        export XDG_CACHE_HOME=$(cache "ab-$which")
        LD_LIBRARY_PATH=$ld step "ab $which $round: mlp step breakdown" 40 "$cli" bench mlp --breakdown --repeats 2
        LD_LIBRARY_PATH=$ld step "ab $which $round: mlp" 40 "$cli" train --epochs 5 --no-autotune
      done
    done
    LD_LIBRARY_PATH=$root/.gpu/baseline:$LD_LIBRARY_PATH XDG_CACHE_HOME=$(cache ab-baseline) \
      step "ab baseline: cnn" 45 .gpu/baseline/anycl train --model cnn --epochs 3 --no-autotune
    XDG_CACHE_HOME=$(cache ab-this) step "ab this: cnn" 45 "$anycl" train --model cnn --epochs 3 --no-autotune
  fi
  if has shipped; then  # the device's own database entry (tuning/*.txt) against CLBlast's own parameters
    local setting
    for setting in ${GPU_CHECK_SHIPPED_SETTINGS:-entry clblast}; do
      export XDG_CACHE_HOME=$(cache "shipped-$setting")
      if [ "$setting" = clblast ]; then export ANYCL_TUNING_DATABASE=off; else unset ANYCL_TUNING_DATABASE; fi
      step "shipped $setting: cnn" 45 "$anycl" train --model cnn --epochs 3 --no-autotune
      step "shipped $setting: mlp" 30 "$anycl" train --epochs 5 --no-autotune
      if [ "$setting" = entry ]; then  # bench's figures beside train's; each Conv2D forward on this device
        step "shipped entry: mlp step breakdown" 40 "$anycl" bench mlp --breakdown --repeats 2
        step "shipped entry: bench cnn" 75 "$anycl" bench cnn --limit 12800 --repeats 3 \
          --conv-forward default,winograd,direct
      fi
      step "shipped $setting: gemm" 60 --to "$out/gemm-$setting.json" "$anycl" bench gemm --model mlp --sizes 4096 --json
      step "shipped $setting: gemm beside PyTorch" 60 "$python" tools/pytorch_gemm.py "$out/gemm-$setting.json" \
        --device "$torch_device"
    done
    unset ANYCL_TUNING_DATABASE
    step "PyTorch cnn" 60 "$python" tools/pytorch_reference.py --model cnn --epochs 3 --device "$torch_device"
    step "PyTorch mlp" 60 "$python" tools/pytorch_reference.py --model mlp --epochs 5 --device "$torch_device"
  fi
  if has tune-full; then  # `anycl tune` beyond the shortlist at both models' shapes, then both trained
    export XDG_CACHE_HOME=$(cache tune-full)
    step "tuning for both models" $((${GPU_CHECK_TUNE_SECONDS:-120} + 30)) \
      "$anycl" tune --model mlp,cnn --minutes "$(python3 -c "print(${GPU_CHECK_TUNE_SECONDS:-120} / 60)")"
    step "tuning chosen" 10 "$anycl" tune --export
    step "gemm, tuned (mlp shapes and 4096)" 60 --to "$out/gemm-tuned.json" \
      "$anycl" bench gemm --model mlp --sizes "$sizes" --json
    step "gemm beside PyTorch (tuned)" 60 "$python" tools/pytorch_gemm.py "$out/gemm-tuned.json" --device "$torch_device"
    step "gemm, tuned (cnn)" 60 "$anycl" bench gemm --model cnn --sizes 1024
    step "anycl train cnn, tuned" 45 "$anycl" train --model cnn --epochs 3
    step "anycl train mlp, tuned" 30 "$anycl" train --epochs 3
  fi
  if has tune-4096; then  # the indirect kernel tuned at 4096³ alone (a dense 4096-4096-4096 layer, batch 4096)
    export XDG_CACHE_HOME=$(cache tune-4096)
    step "tuning at 4096^3" $((${GPU_CHECK_TUNE4096_SECONDS:-60} + 30)) "$anycl" tune --layers 4096 \
      --features 4096 --classes 4096 --batch 4096 --minutes "$(python3 -c "print(${GPU_CHECK_TUNE4096_SECONDS:-60} / 60)")"
    step "tuning chosen at 4096^3" 10 "$anycl" tune --export
    step "gemm at 4096^3, tuned there" 60 --to "$out/gemm-4096.json" "$anycl" bench gemm --model mlp --sizes 4096 --json
    step "gemm at 4096^3 beside PyTorch" 60 "$python" tools/pytorch_gemm.py "$out/gemm-4096.json" --device "$torch_device"
  fi
  if has train; then  # as a user runs it: first-use tuning at the model's own shapes, then training
    export XDG_CACHE_HOME=$(cache train)
    step "anycl train mlp" 150 "$anycl" train --epochs "$epochs" --metrics "$out/mlp.csv"
    step "PyTorch mlp" 90 "$python" tools/pytorch_reference.py --model mlp --epochs "$epochs" --device "$torch_device"
    step "anycl train cnn" 120 "$anycl" train --model cnn --epochs 3 --metrics "$out/cnn.csv"
    step "PyTorch cnn" 60 "$python" tools/pytorch_reference.py --model cnn --epochs 3 --device "$torch_device"
  fi
  if has clblast-train; then  # the same with CLBlast's own parameters: what first-use tuning gained
    export XDG_CACHE_HOME=$(cache clblast-train) ANYCL_TUNING=off
    step "anycl train mlp, CLBlast's own parameters" 60 "$anycl" train --epochs 3 --no-autotune
    step "anycl train cnn, CLBlast's own parameters" 60 "$anycl" train --model cnn --epochs 3 --no-autotune
    unset ANYCL_TUNING
  fi
  local acc_pids=() acc_dir=/tmp/gpu-check-accuracy
  if has accuracy; then  # in the background, beside the tests: each seed's run on its own
    rm -rf "$acc_dir" && mkdir -p "$acc_dir"
    local seed acc_epochs=${GPU_CHECK_ACCURACY_EPOCHS:-10} acc_limit=$((deadline - SECONDS - 15))
    echo "== accuracy: seeds ${GPU_CHECK_SEEDS:-1 2 3}, $acc_epochs epochs (at ${SECONDS} s, limit $acc_limit s)" | tee -a "$log"
    for seed in ${GPU_CHECK_SEEDS:-1 2 3}; do
      XDG_CACHE_HOME=$(cache bncnn) timeout --kill-after=5 "$acc_limit" "$anycl" train --model bncnn \
        --epochs "$acc_epochs" --seed "$seed" --no-autotune --quiet --metrics "$acc_dir/anycl-$seed.jsonl" "${limit[@]}" \
        >"$acc_dir/anycl-$seed.log" 2>&1 &
      acc_pids+=($!)
      local init
      for init in ${GPU_CHECK_ACCURACY_INITS-torch keras}; do  # GPU_CHECK_ACCURACY_INITS= : anycl alone
        timeout --kill-after=5 "$acc_limit" "$python" tools/pytorch_reference.py --model bncnn --epochs "$acc_epochs" \
          --seed "$seed" --init "$init" --device "$torch_device" "${limit[@]}" >"$acc_dir/pytorch-$init-$seed.jsonl" 2>&1 &
        acc_pids+=($!)
      done
    done
  fi
  local left=$((deadline - SECONDS - 10))
  if has tests && [ "$left" -gt 20 ]; then
    # anycl_tests in GPU_CHECK_TEST_SHARDS processes (default 4), each a contiguous range of its test
    # cases (doctest's --first/--last; the cases are independent, as ctest -j runs them): on one
    # process they outlasted a command's budget on the H200.
    export XDG_CACHE_HOME=$(cache tests)
    local shards=${GPU_CHECK_TEST_SHARDS:-4} total shard pids=()
    total=$(build/tests/anycl_tests --count 2>/dev/null | awk -F': ' '/test cases passing/ { print $2 }')
    total=${total:-0}
    echo "== tests with ANYCL_DEVICE=$device (limit $left s): anycl_core_tests, anycl_tests' $total cases in $shards shards" |
      tee -a "$log"
    timeout --kill-after=5 "$left" build/tests/anycl_core_tests >"$out/tests-core.log" 2>&1 &
    local core=$!
    for ((shard = 0; shard < shards; shard++)); do
      local first=$((shard * total / shards + 1)) last=$(((shard + 1) * total / shards))
      timeout --kill-after=5 "$left" build/tests/anycl_tests --first="$first" --last="$last" \
        >"/tmp/gpu-check-tests-$((shard + 1)).log" 2>&1 &
      pids+=($!)
    done
    for ((shard = 0; shard < shards; shard++)); do
      wait "${pids[$shard]}"
      echo "== anycl_tests cases $((shard * total / shards + 1))-$(((shard + 1) * total / shards)): exit $?" | tee -a "$log"
    done
    wait "$core"
    echo "== anycl_core_tests: exit $?" | tee -a "$log"
    for ((shard = 1; shard <= shards; shard++)); do  # one file back (the device tool returns 8 at most)
      echo "==> anycl_tests shard $shard of $shards" && cat "/tmp/gpu-check-tests-$shard.log"
    done >"$out/tests.log"
    tail -n 4 "$out/tests-core.log" | tee -a "$log"
    for ((shard = 0; shard < shards; shard++)); do  # doctest counts the cases before --first as passed
      awk -v skip=$((shard * total / shards)) -v name="anycl_tests cases $((shard * total / shards + 1))-$(((shard + 1) * total / shards))" \
        -F'[|:]' '/\[doctest\] test cases:/ { gsub(/[^0-9]/, "", $3); gsub(/[^0-9]/, "", $4)
          print name ": " $3 - skip " passed, " $4 " failed (a case cut by the time limit counts as failed)" }' \
        "/tmp/gpu-check-tests-$((shard + 1)).log" | tee -a "$log"
    done
  fi
  if [ "${#acc_pids[@]}" -gt 0 ]; then
    wait "${acc_pids[@]}"
    echo "== accuracy: done at ${SECONDS} s" | tee -a "$log"
    "$python" - "$acc_dir" <<'PY' 2>&1 | tee -a "$log"
import glob, json, os, statistics, sys
groups = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
    name = os.path.basename(path)[:-len(".jsonl")]
    group, seed = name.rsplit("-", 1)
    epochs = []
    for line in open(path):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if "epoch" in row and "test_acc" in row:
            epochs.append(row["test_acc"])
    groups.setdefault(group, []).append((seed, epochs))
for group, runs in sorted(groups.items()):
    finals = [e[-1] for _, e in runs if e]
    print(f"accuracy {group}: " + ", ".join(f"seed {s}: {len(e)} epochs, last {e[-1]:.4f}" if e else f"seed {s}: none"
                                            for s, e in runs)
          + (f"; mean of last {statistics.mean(finals):.4f}" if finals else ""))
    print(f"accuracy {group} per epoch: " + " | ".join(" ".join(f"{a:.4f}" for a in e) for _, e in runs))
PY
    tar -C "$acc_dir" -czf "$out/accuracy.tar.gz" .
  fi
  echo "== summary" | tee -a "$log"
  grep -E '^(== .*exit|model shapes|device|epoch [0-9]|Epoch [0-9]+/|first-use|tuned|test accuracy|accuracy [a-z]|anycl_tests cases)|"epoch": '"$epochs"'|"epoch": 3' "$log" | tail -n 60
}

case "$mode" in
  pack) pack ;;
  run) run ;;
  *) echo "usage: tools/gpu-check.sh pack|run (see the comment at the top)" >&2; exit 2 ;;
esac
