#!/usr/bin/env bash
# CI: clang-tidy over src/ with the committed .clang-tidy; any warning fails. Uses the compile
# commands of a configure-only Release tree (build-tidy/). Installs clang-tidy if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
command -v clang-tidy >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-tidy >/dev/null
# No precompiled header (ANYCL_LIBRARY_PCH=OFF): each file is parsed with its own includes, so one that
# uses what it does not include fails here.
cmake -S . -B build-tidy -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DANYCL_BUILD_TESTS=OFF -DANYCL_BUILD_SAMPLES=OFF -DANYCL_BUILD_TOOLS=OFF -DANYCL_WITH_ONNX=OFF \
  -DANYCL_LIBRARY_PCH=OFF >/dev/null
# Only what this configuration compiles (src/export/ is the anycl tool's ONNX writer and needs
# protoc's generated code; src/dist/mpi_collective.cpp needs MPI): files in the compile database.
files=$(git ls-files 'src/*.cpp' | while read -r f; do
  grep -q "\"file\": \"$PWD/$f\"" build-tidy/compile_commands.json && echo "$f"; done)
echo "run-tidy: clang-tidy on $(echo "$files" | wc -w) files" >&2
out=$(mktemp)
status=0
echo "$files" | xargs -P "$(nproc)" -n 4 clang-tidy -p build-tidy --quiet --warnings-as-errors='*' >"$out" 2>&1 ||
  status=$?
grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated|^Suppressed [0-9]+ warnings|^Use -header-filter' "$out" || true
rm -f "$out"
if [ "$status" -ne 0 ]; then
  echo "run-tidy: clang-tidy found problems (above); fix them or, for a false positive, add NOLINT(check) with a reason" >&2
  exit 1
fi
