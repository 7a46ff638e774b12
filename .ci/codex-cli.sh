#!/usr/bin/env bash
# bashgate inside the real Codex CLI: installs @openai/codex from the npm
# registry into a cache directory (once), checks that network namespaces work,
# and runs its tests in tests/tests/agent_clients.rs (codex::), where headless Codex CLI runs with the
# hooks `bashgate init codex` writes, inside `unshare -rn` (loopback only),
# against a scripted stand-in for the OpenAI Responses API. See docs/codex.md.
#
# It never skips: a CLI that cannot be installed, missing namespaces, or a
# missing tool is an error (exit 1) that says what is missing.
#
# Environment:
#   CODEX_CLI_VERSION    npm version to test (default: the verified one below;
#                         "latest" for the newest release)
#   BASHGATE_CODEX_HOME  install/cache directory
#                         (default ${XDG_CACHE_HOME:-$HOME/.cache}/bashgate-codex-cli)
#   CODEX_BIN            use this codex executable instead; nothing is installed
set -euo pipefail
cd "$(dirname "$0")/.."

# The version docs/codex.md records as verified.
VERIFIED_VERSION=0.169.0
version=${CODEX_CLI_VERSION:-$VERIFIED_VERSION}
cache_home=${XDG_CACHE_HOME:-${HOME:?HOME must be set}/.cache}
install_dir=${BASHGATE_CODEX_HOME:-$cache_home/bashgate-codex-cli}

fail() {
  echo "codex-cli.sh: FAILED: $*" >&2
  exit 1
}

echo "== codex-cli: prerequisites"
for tool in python3 unshare ip cargo node; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed; the Codex CLI end-to-end tests need it"
done
ns_out=$(unshare -rn sh -c 'ip link set lo up && ip -o link show' 2>&1) ||
  fail "cannot create a network namespace with \`unshare -rn\` ($ns_out); unprivileged user namespaces must be enabled"
[ "$(printf '%s\n' "$ns_out" | wc -l)" -eq 1 ] || fail "the new network namespace is not loopback-only: $ns_out"

echo "== codex-cli: the CLI"
runs() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }
if [ -n "${CODEX_BIN:-}" ]; then
  runs "$CODEX_BIN" || fail "CODEX_BIN=$CODEX_BIN does not run (\`$CODEX_BIN --version\` failed)"
else
  CODEX_BIN=$install_dir/node_modules/.bin/codex
  installed=$( { runs "$CODEX_BIN" && "$CODEX_BIN" --version 2>/dev/null; } | tail -n1 | awk "{print \$NF}" || true)
  if [ "$version" = latest ] || [ "$installed" != "$version" ]; then
    command -v npm >/dev/null || fail "npm is not installed, and the Codex CLI is not cached in $install_dir"
    echo "installing @openai/codex@$version into $install_dir (about 400 MB, once)"
    mkdir -p "$install_dir"
    [ -f "$install_dir/package.json" ] || echo '{"private": true}' >"$install_dir/package.json"
    npm install --prefix "$install_dir" --no-audit --no-fund --no-save \
      "@openai/codex@$version" ||
      fail "npm could not install @openai/codex@$version (is the npm registry reachable?)"
  fi
  runs "$CODEX_BIN" || fail "the installed CLI does not run: $CODEX_BIN"
fi
got=$("$CODEX_BIN" --version 2>/dev/null | tail -n1 | awk "{print \$NF}")
echo "Codex CLI: $got ($CODEX_BIN)"
[ "$got" = "$VERIFIED_VERSION" ] ||
  echo "note: $got is not the version docs/codex.md records as verified ($VERIFIED_VERSION)" >&2
export CODEX_BIN

echo "== codex-cli: build"
cargo build -q -p bashgate --bin bashgate --bin bashgate-hook --bin bashgate-shell
cargo test -q -p bashgate-tests --test agent_clients --no-run
BASHGATE_BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/bashgate
[ -x "$BASHGATE_BIN" ] || fail "bashgate was built but is not at $BASHGATE_BIN"
# `bashgate init` writes the hook binary beside it into the client's settings.
[ -x "${BASHGATE_BIN%/*}/bashgate-hook" ] || fail "bashgate-hook was built but is not beside $BASHGATE_BIN"
export BASHGATE_BIN

echo "== codex-cli: end-to-end tests"
log=$(mktemp -t bashgate-codex-cli.XXXXXX)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
set +e
cargo test -p bashgate-tests --test agent_clients -- --ignored codex --test-threads 2 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || fail "the Codex CLI end-to-end tests failed (Codex CLI $got)"
passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | tail -n1)
[ "${passed:-0}" -gt 0 ] || fail "no Codex CLI end-to-end test ran"
echo "codex-cli: $passed tests passed against Codex CLI $got in $(($(date +%s) - start)) s"
