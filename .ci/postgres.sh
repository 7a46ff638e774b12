#!/usr/bin/env bash
# PostgreSQL's server programs for the fleet tests (issue 19): the tests
# start a throwaway cluster themselves (tests/src/postgres.rs). Installed
# from Debian's packages when missing; a machine where that fails fails CI.
set -euo pipefail

found() {
    command -v initdb >/dev/null 2>&1 && return 0
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}

if ! found; then
    echo "PostgreSQL is not installed; installing Debian's package"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends postgresql
fi
found || { echo "PostgreSQL's initdb is still missing" >&2; exit 1; }
ls -d /usr/lib/postgresql/*/bin 2>/dev/null || command -v initdb
