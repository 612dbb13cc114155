#!/usr/bin/env bash
# The shared library's exports. libanycl.so exports the C API and the public C++ API only
# (cmake/anycl.map): every dynamic symbol it defines is an anycl_* C function or names anycl::
# (demangled), no anycl::detail symbol is exported, every C++ name exported is declared in a public
# header (include/anycl), and every function anycl.h declares is exported.
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
  # No anycl::detail internal at all (the programs that reach internals link anycl_internal, a
  # static archive of the same objects), and every C++ name exported is one the public headers
  # declare: each part of its qualified name (anycl::Runtime::info: Runtime, info) is a word there.
  detail=$(echo "$defined" | c++filt | grep -F 'anycl::detail::' | sort -u || true)
  if [ -n "$detail" ]; then
    echo "check_exports: $lib exports anycl::detail internals (cmake/anycl_version_script.cmake should hide them):" >&2
    echo "$detail" | head -40 >&2
    exit 1
  fi
  include=$(cd "$(dirname "$header")/.." && pwd)  # include/, above anycl/anycl.h
  # Words of the public headers, less the classes they only forward-declare (`class ConvOps;`: a
  # private class behind a member pointer, whose members are not API).
  forward_only=$(comm -23 \
    <(grep -rhoE '(class|struct)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*;' "$include/anycl" | awk '{print $2}' | tr -d ';' | sort -u) \
    <(grep -rhoE '(class|struct)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*([[:space:]]+final)?[[:space:]]*[:{]' "$include/anycl" | awk '{print $2}' | tr -d ':{' | sort -u))
  words=$(comm -23 <(grep -rhoE '[A-Za-z_][A-Za-z0-9_]*' "$include/anycl" | sort -u) <(echo "$forward_only" | sort -u))
  undeclared=$(echo "$defined" | c++filt | grep -F 'anycl::' | sort -u | while IFS= read -r symbol; do
      # The anycl:: name (after a vtable/typeinfo prefix or a template function's return type),
      # without arguments, template arguments and ABI tags; other names (std:: instances over
      # anycl's types) are not anycl's declarations.
      plain=$(sed -E 's/^(vtable|typeinfo|typeinfo name|VTT|construction vtable|guard variable) for //' <<<"$symbol")
      name=$(sed -n -E 's/^([^<(]* )?anycl::([A-Za-z0-9_:~]*)([<([].*)?$/\2/p' <<<"$plain")
      [ -n "$name" ] || continue
      missing=""
      IFS=':' read -r -a parts <<<"${name//::/:}"
      for part in "${parts[@]}"; do
        part=${part#\~}
        case $part in operator*|"") continue ;; esac
        grep -q -x -F -- "$part" <<<"$words" || missing="$missing $part"
      done
      [ -z "$missing" ] || echo "$symbol  (not in a public header:$missing)"
    done)
  if [ -n "$undeclared" ]; then
    echo "check_exports: $lib exports C++ names no public header (include/anycl) declares:" >&2
    echo "$undeclared" | head -40 >&2
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
