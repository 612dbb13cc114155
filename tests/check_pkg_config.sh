#!/usr/bin/env bash
# A C11 application built against an installed prefix through pkg-config alone, as docs/c-api.md
# says: `cc -std=c11 app.c $(pkg-config --cflags --libs anycl)`. The prefix is copied elsewhere
# first, so the test also shows the installed tree is relocatable (anycl.pc finds its own prefix).
# Usage: check_pkg_config.sh PREFIX APP_C SCRATCH [CC]
set -euo pipefail
prefix=$1 app=$2 scratch=$3 cc=${4:-cc}
command -v pkg-config >/dev/null || { echo "[anycl test skipped] pkg-config is not installed"; exit 77; }
pc=$(find "$prefix" -name anycl.pc -path '*pkgconfig*' | head -1)
[ -n "$pc" ] || { echo "check_pkg_config: no anycl.pc under $prefix" >&2; exit 1; }
if grep -q -F "$prefix" "$pc"; then
  echo "check_pkg_config: $pc names the install prefix $prefix; it must be relative to \${pcfiledir}" >&2
  exit 1
fi
rm -rf "$scratch" && mkdir -p "$scratch"
cp -a "$prefix" "$scratch/moved"  # somewhere the configure step never heard of
pcdir=$(dirname "${pc/#$prefix/$scratch/moved}")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs anycl)
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$app" -o "$scratch/app" $flags
libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir anycl)
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$scratch/app" "$scratch/app.anycl"
