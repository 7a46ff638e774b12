#!/usr/bin/env bash
# bashgate inside the real Gemini CLI: installs @google/gemini-cli from the npm
# registry into a cache directory (once), checks that network namespaces work,
# and runs its tests in tests/tests/agent_clients.rs (gemini::), where headless Gemini CLI runs with the
# hooks `bashgate init gemini` writes, inside `unshare -rn` (loopback only),
# against a scripted stand-in for the Gemini API. See docs/gemini-cli.md.
#
# It never skips: a CLI that cannot be installed, missing namespaces, or a
# missing tool is an error (exit 1) that says what is missing.
#
# Environment:
#   GEMINI_CLI_VERSION    npm version to test (default: the verified one below;
#                         "latest" for the newest release)
#   BASHGATE_GEMINI_HOME  install/cache directory
#                         (default ${XDG_CACHE_HOME:-$HOME/.cache}/bashgate-gemini-cli)
#   GEMINI_BIN            use this gemini executable instead; nothing is installed
set -euo pipefail
cd "$(dirname "$0")/.."

# The version docs/gemini-cli.md records as verified.
VERIFIED_VERSION=0.61.0
version=${GEMINI_CLI_VERSION:-$VERIFIED_VERSION}
cache_home=${XDG_CACHE_HOME:-${HOME:?HOME must be set}/.cache}
install_dir=${BASHGATE_GEMINI_HOME:-$cache_home/bashgate-gemini-cli}

fail() {
  echo "gemini-cli.sh: FAILED: $*" >&2
  exit 1
}

echo "== gemini-cli: prerequisites"
for tool in python3 unshare ip cargo node; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed; the Gemini CLI end-to-end tests need it"
done
ns_out=$(unshare -rn sh -c 'ip link set lo up && ip -o link show' 2>&1) ||
  fail "cannot create a network namespace with \`unshare -rn\` ($ns_out); unprivileged user namespaces must be enabled"
[ "$(printf '%s\n' "$ns_out" | wc -l)" -eq 1 ] || fail "the new network namespace is not loopback-only: $ns_out"

echo "== gemini-cli: the CLI"
runs() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }
if [ -n "${GEMINI_BIN:-}" ]; then
  runs "$GEMINI_BIN" || fail "GEMINI_BIN=$GEMINI_BIN does not run (\`$GEMINI_BIN --version\` failed)"
else
  GEMINI_BIN=$install_dir/node_modules/.bin/gemini
  installed=$( { runs "$GEMINI_BIN" && "$GEMINI_BIN" --version 2>/dev/null; } | tail -n1 || true)
  if [ "$version" = latest ] || [ "$installed" != "$version" ]; then
    command -v npm >/dev/null || fail "npm is not installed, and the Gemini CLI is not cached in $install_dir"
    echo "installing @google/gemini-cli@$version into $install_dir (about 100 MB, once)"
    mkdir -p "$install_dir"
    [ -f "$install_dir/package.json" ] || echo '{"private": true}' >"$install_dir/package.json"
    npm install --prefix "$install_dir" --no-audit --no-fund --no-save \
      "@google/gemini-cli@$version" ||
      fail "npm could not install @google/gemini-cli@$version (is the npm registry reachable?)"
  fi
  runs "$GEMINI_BIN" || fail "the installed CLI does not run: $GEMINI_BIN"
fi
got=$("$GEMINI_BIN" --version 2>/dev/null | tail -n1)
echo "Gemini CLI: $got ($GEMINI_BIN)"
[ "$got" = "$VERIFIED_VERSION" ] ||
  echo "note: $got is not the version docs/gemini-cli.md records as verified ($VERIFIED_VERSION)" >&2
export GEMINI_BIN

echo "== gemini-cli: build"
cargo build -q -p bashgate --bin bashgate --bin bashgate-hook --bin bashgate-shell
cargo test -q -p bashgate-tests --test agent_clients --no-run
BASHGATE_BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/bashgate
[ -x "$BASHGATE_BIN" ] || fail "bashgate was built but is not at $BASHGATE_BIN"
# `bashgate init` writes the hook binary beside it into the client's settings.
[ -x "${BASHGATE_BIN%/*}/bashgate-hook" ] || fail "bashgate-hook was built but is not beside $BASHGATE_BIN"
export BASHGATE_BIN

echo "== gemini-cli: end-to-end tests"
log=$(mktemp -t bashgate-gemini-cli.XXXXXX)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
set +e
cargo test -p bashgate-tests --test agent_clients -- --ignored gemini --test-threads 2 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || fail "the Gemini CLI end-to-end tests failed (Gemini CLI $got)"
passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | tail -n1)
[ "${passed:-0}" -gt 0 ] || fail "no Gemini CLI end-to-end test ran"
echo "gemini-cli: $passed tests passed against Gemini CLI $got in $(($(date +%s) - start)) s"
