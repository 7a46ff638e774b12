#!/usr/bin/env bash
# Programs the differential oracles run for real (tests/src/gen_programs.rs
# and tests/tests/script_oracle.rs name their paths) that a minimal Debian
# may lack: gawk (Debian ships mawk as awk), busybox (its sed and awk) and
# original-awk (the one true awk). Installed from Debian's packages when
# missing; a machine where that fails fails CI.
set -euo pipefail

missing=()
command -v gawk >/dev/null 2>&1 || missing+=(gawk)
command -v busybox >/dev/null 2>&1 || missing+=(busybox)
command -v original-awk >/dev/null 2>&1 || missing+=(original-awk)

if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing Debian's ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
for p in gawk busybox original-awk; do
    command -v "$p" >/dev/null 2>&1 || { echo "$p is still missing" >&2; exit 1; }
    command -v "$p"
done
