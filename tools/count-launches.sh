#!/usr/bin/env bash
# Runs a command with every OpenCL kernel launch counted (CLBlast's included), e.g.
#   tools/count-launches.sh build/tools/anycl bench mlp
# `anycl bench mlp` then fills its "all CL launches/step" column; any command gets the total at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shim=${ANYCL_LAUNCH_COUNTER:-}
if [ -z "$shim" ]; then
  for dir in "$here/../build-perf/tools" "$here/../build/tools"; do
    [ -f "$dir/libanycl_launch_counter.so" ] && shim="$dir/libanycl_launch_counter.so" && break
  done
fi
if [ -z "$shim" ] || [ ! -f "$shim" ]; then
  echo "count-launches: libanycl_launch_counter.so not found — build the tree (cmake --build build) or set ANYCL_LAUNCH_COUNTER" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  echo "usage: tools/count-launches.sh COMMAND [ARGS...]" >&2
  exit 2
fi
LD_PRELOAD="$shim${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"
