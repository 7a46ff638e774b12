#!/usr/bin/env bash
# bashgate inside the real Claude Code CLI: installs @anthropic-ai/claude-code from
# the npm registry into a cache directory (once), checks that network namespaces
# work, and runs tests/tests/claude_code.rs, where headless Claude Code runs with
# the hooks `bashgate init claude` writes, inside `unshare -rn` (loopback only),
# against a scripted fake Anthropic API. See docs/claude-code-e2e.md.
#
# It never skips: a missing CLI that cannot be installed, missing namespaces, or
# a missing tool is an error (exit 1) that says what is missing.
#
# Environment:
#   CLAUDE_CODE_VERSION   npm version to test (default: the verified one below;
#                         "latest" for the newest release)
#   BASHGATE_CLAUDE_HOME  install/cache directory
#                         (default ${XDG_CACHE_HOME:-$HOME/.cache}/bashgate-claude-code)
#   CLAUDE_BIN            use this claude executable instead; nothing is installed
set -euo pipefail
cd "$(dirname "$0")/.."

# The version docs/claude-code-e2e.md records as verified.
VERIFIED_VERSION=2.1.330
version=${CLAUDE_CODE_VERSION:-$VERIFIED_VERSION}
cache_home=${XDG_CACHE_HOME:-${HOME:?HOME must be set}/.cache}
install_dir=${BASHGATE_CLAUDE_HOME:-$cache_home/bashgate-claude-code}

fail() {
  echo "claude-code.sh: FAILED: $*" >&2
  exit 1
}

echo "== claude-code: prerequisites"
for tool in python3 curl unshare ip cargo; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed; the Claude Code end-to-end tests need it"
done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' ||
  fail "python3 is older than 3.8 ($(python3 --version 2>&1)); the fake servers need 3.8+ (verified with 3.11)"
# A new user + network namespace with only loopback, as every test session uses.
ns_out=$(unshare -rn sh -c 'ip link set lo up && ip -o link show' 2>&1) ||
  fail "cannot create a network namespace with \`unshare -rn\` ($ns_out). Unprivileged user namespaces must be enabled (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0), or run in a container with CAP_SYS_ADMIN."
[ "$(printf '%s\n' "$ns_out" | wc -l)" -eq 1 ] || fail "the new network namespace is not loopback-only: $ns_out"
echo "network namespaces: ok (loopback only)"

echo "== claude-code: the CLI"
runs() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }
if [ -n "${CLAUDE_BIN:-}" ]; then
  runs "$CLAUDE_BIN" || fail "CLAUDE_BIN=$CLAUDE_BIN does not run (\`$CLAUDE_BIN --version\` failed)"
else
  CLAUDE_BIN=$install_dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe
  installed=$( { runs "$CLAUDE_BIN" && "$CLAUDE_BIN" --version 2>/dev/null; } | awk '{print $1}' || true)
  if [ "$version" = latest ] || [ "$installed" != "$version" ]; then
    command -v npm >/dev/null || fail "npm is not installed, and the Claude Code CLI is not cached in $install_dir"
    echo "installing @anthropic-ai/claude-code@$version into $install_dir (about 370 MB, once)"
    mkdir -p "$install_dir"
    [ -f "$install_dir/package.json" ] || echo '{"private": true}' >"$install_dir/package.json"
    npm install --prefix "$install_dir" --no-audit --no-fund --no-save \
      "@anthropic-ai/claude-code@$version" ||
      fail "npm could not install @anthropic-ai/claude-code@$version (is the npm registry reachable?)"
    # The package's postinstall copies the platform's native binary over
    # bin/claude.exe. Where install scripts did not run, do the same.
    if ! runs "$CLAUDE_BIN"; then
      native=$(find "$install_dir/node_modules/@anthropic-ai" -maxdepth 2 -type f -name claude \
        -path '*claude-code-linux-*' 2>/dev/null | head -n1)
      [ -n "$native" ] || fail "the npm package installed no native claude binary for this platform ($(uname -sm))"
      cp "$native" "$CLAUDE_BIN" && chmod +x "$CLAUDE_BIN"
    fi
  fi
  runs "$CLAUDE_BIN" || fail "the installed CLI does not run: $CLAUDE_BIN"
fi
got=$("$CLAUDE_BIN" --version 2>/dev/null | head -n1)
echo "Claude Code: $got ($CLAUDE_BIN)"
[ "${got%% *}" = "$VERIFIED_VERSION" ] ||
  echo "note: $got is not the version docs/claude-code-e2e.md records as verified ($VERIFIED_VERSION)" >&2
export CLAUDE_BIN

echo "== claude-code: build"
# Build bashgate (debug, as `cargo test` would) and the tests first, and hand the
# binary to the tests (BASHGATE_BIN), so the timings below are the sessions' own.
cargo build -q -p bashgate --bin bashgate --bin bashgate-hook --bin bashgate-shell
cargo test -q -p bashgate-tests --test claude_code --test agent_clients --no-run
BASHGATE_BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/bashgate
[ -x "$BASHGATE_BIN" ] || fail "bashgate was built but is not at $BASHGATE_BIN"
# `bashgate init` writes the hook binary beside it into the client's settings.
[ -x "${BASHGATE_BIN%/*}/bashgate-hook" ] || fail "bashgate-hook was built but is not beside $BASHGATE_BIN"
# ...and the shell wrapper beside that, into Claude Code's CLAUDE_CODE_SHELL_PREFIX.
[ -x "${BASHGATE_BIN%/*}/bashgate-shell" ] || fail "bashgate-shell was built but is not beside $BASHGATE_BIN"
export BASHGATE_BIN

echo "== claude-code: end-to-end tests"
log=$(mktemp -t bashgate-claude-code.XXXXXX)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
set +e
{
  cargo test -p bashgate-tests --test claude_code -- --ignored --test-threads 2 &&
    cargo test -p bashgate-tests --test agent_clients -- --ignored claude --test-threads 2
} 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || fail "the Claude Code end-to-end tests failed (Claude Code $got)"
passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{n += $1} END {print n + 0}')
[ "${passed:-0}" -gt 0 ] || fail "no Claude Code end-to-end test ran"
echo "claude-code: $passed tests passed against Claude Code $got in $(($(date +%s) - start)) s"
