#!/usr/bin/env bash
# Fails when a tracked C++ file is not formatted as .clang-format says (fix: clang-format -i FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { apt-get install -y -qq clang-format >/dev/null 2>&1 || true; }
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format not available; skipped" >&2
  exit 0
fi
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror
