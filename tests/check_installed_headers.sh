#!/usr/bin/env bash
# The installed package is anycl's alone (tracker issue 24): its headers include no Boost header
# and no private one (src/ops/), and its CMake and pkg-config files require no Boost.
# Usage: check_installed_headers.sh PREFIX
set -euo pipefail
prefix=$1
include="$prefix/include/anycl"
[ -f "$include/anycl.hpp" ] || { echo "check_installed_headers: no $include/anycl.hpp (install first)" >&2; exit 1; }
status=0
if boost=$(grep -r -n -E '#[[:space:]]*include[[:space:]]*[<"]boost/' "$include"); then
  echo "check_installed_headers: installed headers include Boost (keep it in src/, e.g. src/runtime/runtime_impl.hpp):" >&2
  echo "$boost" >&2
  status=1
fi
if [ -e "$include/ops" ]; then
  echo "check_installed_headers: $include/ops is installed; the ops headers are private (src/ops/)" >&2
  status=1
fi
for file in "$prefix"/lib*/cmake/anycl/anyclConfig.cmake "$prefix"/lib*/pkgconfig/anycl.pc; do
  [ -f "$file" ] || { echo "check_installed_headers: $file missing" >&2; status=1; continue; }
  if grep -n -i 'boost' "$file" >&2; then
    echo "check_installed_headers: $file requires Boost; public headers do not need it" >&2
    status=1
  fi
done
exit $status
