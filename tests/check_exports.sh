#!/usr/bin/env bash
# The shared library's exports. libanycl.so exports the C API and the public C++ API only
# (cmake/anycl.map): every dynamic symbol it defines is an anycl_* C function or names anycl::
# (demangled), no anycl::detail symbol is exported but those cmake/detail_exports.txt lists, and every
# function anycl.h declares is exported.
# anycl.dll (mingw-w64, OBJDUMP given): every function anycl.h declares is in its export table, the
# table fits a DLL (at most 65,535 entries), and the DLL needs no mingw-w64 runtime DLL (libstdc++,
# libgcc, winpthread and zlib are linked in). It exports every global symbol of anycl's own objects
# (GNU ld's default): Windows binds each import to one named DLL, so unlike ELF an extra export
# cannot clash with an application's own copy of fmt or Boost.
# Usage: check_exports.sh LIBRARY HEADER [OBJDUMP]
set -euo pipefail
lib=$1 header=$2 objdump=${3:-}
if [ -z "$objdump" ]; then
  defined=$(nm -D --defined-only "$lib" | awk '{print $NF}')
  stray=$(echo "$defined" | c++filt | grep -v -E '^anycl_|anycl::|^(_init|_fini|_edata|_end|__bss_start)$|@' || true)
  if [ -n "$stray" ]; then
    echo "check_exports: $lib exports symbols outside anycl's API (cmake/anycl.map should hide them):" >&2
    echo "$stray" | head -40 >&2
    exit 1
  fi
  # No anycl::detail internals beyond cmake/detail_exports.txt (what the anycl command and the test
  # programs still link against), and nothing else that names a detail type.
  allow=$(grep -v '^#' "$(dirname "$0")/../cmake/detail_exports.txt" || true)
  detail=$(echo "$defined" | c++filt | grep -F 'anycl::detail::' | sed 's/(.*//' | sort -u || true)
  unlisted=$(while IFS= read -r name; do
      [ -n "$name" ] || continue
      base=$(sed -E -n 's/^([^<]* )?(anycl::detail::[^<]*).*$/\2/p' <<<"$name" | sed 's/\[abi:[a-z0-9]*\]$//')
      if [ -z "$base" ] || ! grep -q -x -F "$base" <<<"$allow"; then echo "$name"; fi
    done <<<"$detail")
  if [ -n "$unlisted" ]; then
    echo "check_exports: $lib exports anycl::detail internals (cmake/anycl_version_script.cmake should hide them):" >&2
    echo "$unlisted" | head -40 >&2
    exit 1
  fi
else
  dump=$("$objdump" -p "$lib")
  # The export table's name list: "\t[   0] +base[   1] 0000 name" lines after "[Ordinal/Name Pointer] Table".
  defined=$(awk '/\[Ordinal\/Name Pointer\] Table/ {on = 1; next} on && /^\t\[ *[0-9]+\]/ {print $NF; next} on {on = 0}' <<<"$dump")
  count=$(grep -c . <<<"$defined" || true)
  if [ "$count" -eq 0 ] || [ "$count" -gt 65535 ]; then
    echo "check_exports: $lib exports $count names (a DLL holds 1 to 65,535)" >&2
    exit 1
  fi
  needs=$(awk '/^\tDLL Name: / {print $3}' <<<"$dump" | sort -u)
  runtime=$(grep -i -E '^(libstdc\+\+|libgcc|libwinpthread|zlib|libz)' <<<"$needs" || true)
  if [ -n "$runtime" ]; then
    echo "check_exports: $lib needs mingw-w64 runtime DLLs that a user would not have: $runtime" >&2
    exit 1
  fi
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
if [ -z "$objdump" ]; then
  echo "check_exports: $(echo "$declared" | wc -w) C API functions and $(echo "$defined" | wc -l) symbols in all, all anycl's"
else
  echo "check_exports: $(echo "$declared" | wc -w) C API functions exported by $lib among $count names;" \
       "it imports from: $(echo $needs)"
fi
