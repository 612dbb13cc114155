#!/usr/bin/env bash
# Installs Intel's OpenCL runtime for CPUs from PyPI into build/intel-opencl (a venv; nothing
# outside build/ changes) and writes build/opencl-vendors/: its .icd beside PoCL's, for
# OCL_ICD_VENDORS. Idempotent; prints that folder. Used by run-tests.sh and run-oclgrind.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# intel-cmplr-lib-rt holds libsvml/libimf, which libintelocl needs but the wheel does not declare.
# Pinned so that CI measures what docs/portability.md states; raise both together.
version=${ANYCL_INTEL_OPENCL_VERSION:-2026.2.0}
venv=build/intel-opencl
vendors=build/opencl-vendors

if ! [ -e "$venv/lib/libintelocl.so" ] || ! grep -qx "$version" "$venv/anycl-version" 2>/dev/null; then
  log=$(mktemp)
  if ! { rm -rf "$venv" && /usr/bin/python3 -m venv "$venv" &&
         "$venv/bin/pip" install -q "intel-opencl-rt==$version" "intel-cmplr-lib-rt==$version"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-intel-opencl: pip could not install intel-opencl-rt $version into $venv (above);" \
         "check the network, or set ANYCL_INTEL_OPENCL_VERSION" >&2
    exit 1
  fi
  rm -f "$log"
  echo "$version" >"$venv/anycl-version"
fi
library=$(readlink -f "$venv/lib/libintelocl.so")

# The wheel's own .icd names a placeholder path (/opt/anaconda1anaconda2anaconda3/…): write ours
# with the absolute path (libintelocl's RUNPATH finds its neighbours), and keep PoCL beside it.
mkdir -p "$vendors"
echo "$library" >"$vendors/intel-cpu.icd"
if [ -e /etc/OpenCL/vendors/pocl.icd ]; then cp /etc/OpenCL/vendors/pocl.icd "$vendors/pocl.icd"; fi
readlink -f "$vendors"
