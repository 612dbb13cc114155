#!/usr/bin/env bash
# Fails when a kernel in cl_kernels/ is not plain OpenCL C 1.2, the language every driver anycl
# targets accepts (the runtime builds with -cl-std=CL1.2). PoCL's and Intel's compilers accept some
# Clang extensions that NVIDIA's refuses — variadic macros made every model fail to start on an
# NVIDIA H200 (2026-11-27) while all tests passed on the CPU drivers. So each program is compiled as
# the runtime builds it (common.cl first), with clang in pedantic OpenCL C 1.2 mode, once with its
# defaults and once per -D variant the launchers use (src/ops, src/optim), each preprocessor branch
# among them. Installs clang from Debian when missing; under CI=true a missing clang is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null 2>&1 || true
fi
if ! command -v clang >/dev/null; then
  echo "check-kernels: clang not available (apt-get install clang); the check is skipped" >&2
  [ "${CI:-}" = true ] && exit 1
  exit 0
fi

# The -D variants the launchers build beside each program's defaults ("" = the defaults alone).
variants() {
  case $1 in
    activation) echo "|-DBC=32 -DBR=8|-DBC=32 -DBR=4" ;;
    batchnorm)
      local act out=""
      for act in 0 1 2 3 4 5 6; do  # anycl::Activation's codes
        out+="|-DBN_ACT=$act -DBN_ROWS=0 -DWG=256|-DBN_ACT=$act -DBN_ROWS=1 -DWG=64"
      done
      echo "$out"
      ;;
    dropout) echo "|-DMASK_PER_ITEM=1" ;;
    optimizer) echo "|-DPER_ITEM=4" ;;
    gather) echo "|-DT_I32|-DT_F32" ;;
    conv | conv_direct | elementwise_loss | mse | softmax_xent) echo "|-DWG=64" ;;
    *) echo "" ;;
  esac
}

source=$(mktemp --suffix=.cl)
trap 'rm -f "$source"' EXIT
failed=0 checked=0
for file in cl_kernels/*.cl; do
  name=$(basename "$file" .cl)
  [ "$name" = common ] && continue
  cat cl_kernels/common.cl "$file" >"$source"
  IFS='|' read -r -a options <<<"$(variants "$name")|"
  for option in "${options[@]}"; do
    # shellcheck disable=SC2086  # the options are words
    if ! clang -x cl -cl-std=CL1.2 -fsyntax-only -pedantic -Werror=pedantic -Wno-unused-function $option \
      "$source" 2>/tmp/check-kernels.log; then
      echo "check-kernels: $file ${option:-(defaults)} is not plain OpenCL C 1.2 (common.cl is its first lines):" >&2
      cat /tmp/check-kernels.log >&2
      failed=1
    fi
    checked=$((checked + 1))
  done
done
[ "$failed" = 0 ] || exit 1
echo "check-kernels: $checked builds of $(($(ls cl_kernels/*.cl | wc -l) - 1)) programs are plain OpenCL C 1.2"
