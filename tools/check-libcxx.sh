#!/usr/bin/env bash
# CI: anycl with clang and libc++ (the standard library of Apple's toolchain; the closest stand-in
# for a macOS build available here), -Werror, the test suite on PoCL but the tuning searches
# (build-libcxx/).
# Debian's fmt and protobuf are built against libstdc++: fmt is used header-only, ONNX export is
# off. CLBlast is too: its calls that take std::string/unordered_map are in src/blas/clblast_params.cpp,
# compiled against libstdc++ (ANYCL_CLBLAST_STDLIB); the rest of anycl never hands CLBlast a
# standard-library type. Installs what it needs (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=build-libcxx
bash tools/setup.sh  # the packages the library needs (and the Release build CI needs anyway)
need=()
for p in clang-14 libc++-14-dev libc++abi-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "check-libcxx: installing ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# fmt, header-only, as a CMake package of its own (Debian's fmt::fmt links libfmt.so, libstdc++).
fmt_dir=$root/$out/fmt-header-only
mkdir -p "$fmt_dir"
cat >"$fmt_dir/fmt-config.cmake" <<'CONFIG'
add_library(fmt::fmt INTERFACE IMPORTED)
set_target_properties(fmt::fmt PROPERTIES INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
CONFIG

start=$SECONDS
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
log=$(mktemp)
if ! { cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
         -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS="-stdlib=libc++" \
         -DANYCL_CLBLAST_STDLIB=libstdc++ -Dfmt_DIR="$fmt_dir" \
         -DANYCL_WERROR=ON -DANYCL_WITH_ONNX=OFF &&
       cmake --build "$out" --parallel; } >"$log" 2>&1; then
  grep -E -B2 -A12 'error|Error' "$log" | head -100 >&2 || cat "$log" >&2
  echo "check-libcxx: the clang + libc++ build failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
echo "check-libcxx: built with clang + libc++ in $((SECONDS - start)) s" >&2
# Every program but CLBlast's own code must use libc++ (libstdc++ is loaded for CLBlast).
# ldd's output is captured first: under pipefail, `ldd | grep -q` fails whenever grep stops
# reading at the first match and ldd dies of SIGPIPE writing the rest (it did, on CI).
libraries=$(ldd "$out/tools/anycl")
if ! grep 'libc++\.so' >/dev/null <<<"$libraries"; then
  echo "check-libcxx: $out/tools/anycl is not linked against libc++" >&2
  exit 1
fi

export ANYCL_DEVICE=${ANYCL_DEVICE:-pocl}
export ANYCL_CACHE_DIR=$root/$out/kernel-cache
start=$SECONDS
# This build is reduced on purpose (no ONNX export): the ONNX test skips here even under CI=true.
# The two tuning searches (a quick tune, a Ctrl-C'd tune continued) are left to the PoCL and Intel
# passes of run-tests.sh, as in the sanitizer build: minutes of timing candidates in child
# processes, through code every other tuning test here runs too (CI's time budget).
searches='a quick tune_gemm keeps|Ctrl-C during anycl tune'
(cd "$out" && env -u CI ctest -LE oclgrind -E "$searches" --output-on-failure --timeout 900 -j "$(nproc)")
echo "check-libcxx: the suite (less the tuning searches) passed with clang + libc++ in $((SECONDS - start)) s" >&2
