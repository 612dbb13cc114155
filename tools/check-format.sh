#!/usr/bin/env bash
# Fails when a tracked C++ or C file (sources, headers, anycl.h, the C tests and samples) is not
# formatted as .clang-format says (fix: clang-format -i FILE), or when ruff's lint (pyproject.toml's
# [tool.ruff]) finds a problem in a tracked Python file (the package, its tests, samples, tools).
# Installs what it needs: clang-format from Debian, ruff (pinned) from PyPI into build/lint-venv.
# Under CI=true a tool that cannot be installed is a failure; elsewhere its check is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff_version=0.17.5

missing() {
  echo "check-format: $1 not available; its check is skipped" >&2
  if [ "${CI:-}" = true ]; then exit 1; fi
}

command -v clang-format >/dev/null || { apt-get install -y -qq clang-format >/dev/null 2>&1 || true; }
if command -v clang-format >/dev/null; then
  git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | xargs clang-format --dry-run --Werror
else
  missing clang-format
fi

venv=build/lint-venv
if [ "$("$venv/bin/ruff" --version 2>/dev/null)" != "ruff $ruff_version" ]; then
  log=$(mktemp)
  { /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q "ruff==$ruff_version"; } >"$log" 2>&1 ||
    { cat "$log" >&2; echo "check-format: could not install ruff $ruff_version into $venv (above)" >&2; }
  rm -f "$log"
fi
if [ -x "$venv/bin/ruff" ]; then
  git ls-files '*.py' | xargs "$venv/bin/ruff" check --quiet --no-cache
else
  missing ruff
fi
