#!/usr/bin/env bash
# Programs the differential oracle runs for real (tests/src/gen_programs.rs
# names their paths) that a minimal Debian may lack: gawk (Debian ships
# mawk as awk). Installed from Debian's packages when missing; a machine
# where that fails fails CI.
set -euo pipefail

missing=()
command -v gawk >/dev/null 2>&1 || missing+=(gawk)

if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing Debian's ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
command -v gawk >/dev/null 2>&1 || { echo "gawk is still missing" >&2; exit 1; }
command -v gawk
