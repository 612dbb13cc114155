# Sourced by the CI and set-up scripts: install_debian_packages WHO [--no-install-recommends] PACKAGE...
# installs, as root, the Debian packages of the list that are not installed yet (nothing when all are),
# quietly on success; with --no-install-recommends, without the packages they only recommend.
# Not root and something missing: says what to run and exits 1. apt-get failing: shows its output
# and exits 1. WHO names the calling script in the messages.
install_debian_packages() {
  local who=$1 p log options=()
  shift
  if [ "${1:-}" = --no-install-recommends ]; then options=(--no-install-recommends); shift; fi
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$who: missing Debian packages: ${missing[*]} — run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "$who: installing ${missing[*]}" >&2
  log=$(mktemp)
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${options[@]}" "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "$who: apt-get failed (above); check the network and /etc/apt/sources.list" >&2
    exit 1
  fi
  rm -f "$log"
}
