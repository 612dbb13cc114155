#!/usr/bin/env bash
# libanycl.so exports the C API and the public C++ API only (cmake/anycl.map): every dynamic symbol
# it defines is an anycl_* C function or names anycl:: (demangled), and every function anycl.h
# declares is exported. Usage: check_exports.sh LIBRARY HEADER
set -euo pipefail
lib=$1 header=$2
defined=$(nm -D --defined-only "$lib" | awk '{print $NF}')
stray=$(echo "$defined" | c++filt | grep -v -E '^anycl_|anycl::|^(_init|_fini|_edata|_end|__bss_start)$|@' || true)
if [ -n "$stray" ]; then
  echo "check_exports: $lib exports symbols outside anycl's API (cmake/anycl.map should hide them):" >&2
  echo "$stray" | head -40 >&2
  exit 1
fi
declared=$(grep -o -E 'ANYCL_C_API [^(]*\banycl_[a-z0-9_]+\(' "$header" | grep -o -E 'anycl_[a-z0-9_]+\($' | tr -d '(')
missing=0
for f in $declared; do
  # A here-string, not a pipe: grep -q stops at the first match, and with pipefail the echo's SIGPIPE
  # would report a symbol that is there as missing (it did, at random, under ASan).
  if ! grep -q -x -F "$f" <<<"$defined"; then
    echo "check_exports: $f is declared in anycl.h but not exported by $lib" >&2
    missing=1
  fi
done
[ "$missing" -eq 0 ] || exit 1
echo "check_exports: $(echo "$declared" | wc -w) C API functions and $(echo "$defined" | wc -l) symbols in all, all anycl's"
