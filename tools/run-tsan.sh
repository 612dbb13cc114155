#!/usr/bin/env bash
# CI (called by run-sanitizers.sh): the C API's concurrency tests under ThreadSanitizer — clang 14
# with libstdc++ (TSan needs every thread's accesses instrumented, and Debian's fmt and CLBlast are
# libstdc++ builds), -Werror, in build-tsan/: c_api_threads (threads sharing a model, a runtime, training
# beside predictions, first use), c_api_callbacks and c_api_fork. Any report fails (halt_on_error);
# there is no suppression. Without the C API's locks it reports the races (runtime counters, kernel
# arguments) that made results wrong. Assumes setup.sh ran and clang-14 is installed (run-sanitizers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-tsan
targets=(c_api_threads_test c_api_callbacks_test c_api_fork_test)
launcher=()
# ccache caches what compiles against a precompiled header (ANYCL_LIBRARY_PCH) only with this sloppiness.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS=pch_defines,time_macros
fi
start=$SECONDS
log=$(mktemp)
if ! { cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
         -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
         -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DANYCL_WERROR=ON \
         -DANYCL_BUILD_SAMPLES=OFF -DANYCL_WITH_ONNX=OFF "${launcher[@]}" &&
       cmake --build "$out" --parallel --target "${targets[@]}"; } >"$log" 2>&1; then
  grep -E -B2 -A12 'error|Error' "$log" | head -100 >&2 || cat "$log" >&2
  echo "run-tsan: the clang ThreadSanitizer build failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
echo "run-tsan: built with clang + ThreadSanitizer in $((SECONDS - start)) s" >&2
export ANYCL_DEVICE=${ANYCL_DEVICE:-pocl}
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
(cd "$out" && env -u CI ctest -R '^c_api_(threads|callbacks|fork)$' --output-on-failure --timeout 900)
