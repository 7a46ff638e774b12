#!/usr/bin/env bash
# bashgate in the OpenAI Agents SDK (integrations/python): installs the real
# openai-agents package from PyPI into a virtual environment, builds bashgate,
# and runs the pytest suite against that binary. No model is called and
# nothing leaves the machine. See docs/openai-agents.md.
#
# Environment:
#   OPENAI_AGENTS_VERSION  PyPI version to test (default: the verified one
#                          below; "latest" for the newest release)
#   BASHGATE_PYTHON_VENV   the virtual environment (default
#                          ${CARGO_TARGET_DIR:-target}/bashgate-python-venv;
#                          reused between runs)
#   PYTHON                 the interpreter that creates it (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."

# The version docs/openai-agents.md records as verified.
VERIFIED_VERSION=0.24.0
version=${OPENAI_AGENTS_VERSION:-$VERIFIED_VERSION}
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
venv=${BASHGATE_PYTHON_VENV:-$target_dir/bashgate-python-venv}
python=${PYTHON:-python3}

fail() {
  echo "python.sh: FAILED: $*" >&2
  exit 1
}

echo "== python: prerequisites"
for tool in "$python" cargo bash curl; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed; the OpenAI Agents SDK tests need it"
done
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  fail "$("$python" --version 2>&1) is older than 3.10, the oldest the package supports (verified with 3.11)"

echo "== python: virtual environment ($venv)"
if ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv "$venv" ||
    fail "could not create a virtual environment with \`$python -m venv\` (on Debian: apt-get install python3-venv)"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
if [ "$version" = latest ]; then spec=openai-agents; upgrade=(--upgrade); else spec="openai-agents==$version"; upgrade=(); fi
"${pip[@]}" install -q "${upgrade[@]}" "$spec" pytest ||
  fail "pip could not install $spec and pytest (is PyPI reachable?)"
# pip builds in the source tree; clear what an earlier build left there.
rm -rf integrations/python/build integrations/python/bashgate_agents.egg-info
"${pip[@]}" install -q --no-deps --force-reinstall ./integrations/python ||
  fail "pip could not install integrations/python"
got=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("openai-agents"))')
echo "openai-agents $got, $("$venv/bin/python" --version)"
[ "$got" = "$VERIFIED_VERSION" ] ||
  echo "note: openai-agents $got is not the version docs/openai-agents.md records as verified ($VERIFIED_VERSION)" >&2

echo "== python: build"
cargo build -q -p bashgate --bin bashgate || fail "cargo build -p bashgate failed"
BASHGATE_BIN=$target_dir/debug/bashgate
[ -x "$BASHGATE_BIN" ] || fail "bashgate was built but is not at $BASHGATE_BIN"
export BASHGATE_BIN
# Belt and braces: the tests never call a model, and the SDK must not send traces.
export OPENAI_AGENTS_DISABLE_TRACING=1

echo "== python: tests"
# Run from outside the source tree so the installed package is the one tested.
cd integrations/python/tests
"$venv/bin/python" -m pytest -p no:cacheprovider -q . ||
  fail "the OpenAI Agents SDK integration tests failed (openai-agents $got)"
