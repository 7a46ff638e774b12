#!/usr/bin/env bash
# Runs one headless Claude Code session for bashgate's end-to-end tests, inside a
# fresh network namespace (`unshare -rn`: only a loopback interface exists, so no
# packet can leave the machine).
#
# usage: run-session.sh WORKDIR
#
# WORKDIR, prepared by the test (tests/src/claude_code.rs):
#   proj/        the project: Claude Code's working directory, holding
#                .claude/settings.json (written by `bashgate init claude`),
#                .bashgate.toml and, when used, .mcp.json
#   home/        HOME for Claude Code (its ~/.claude state stays here)
#   model.json   the scripted model (see fake_api.py)
#   cop.json     optional: run the Cop stand-in too
#   prompt.txt   the prompt given to `claude -p`
# and afterwards:
#   claude.json  Claude Code's result (--output-format json); claude.err, claude.rc
#   model-requests.jsonl, cop-requests.jsonl   every request each server received
#   attacker-connections.jsonl   every connection to the reverse-shell listener
#
# Environment: CLAUDE_BIN (required; the claude executable), CLAUDE_TIMEOUT
# (seconds, default 180). Everything else in the environment (BASHGATE_STATE_DIR,
# the Cop's key variable...) reaches Claude Code and, through it, the hook;
# ANTHROPIC_* variables are replaced so nothing points at a real API.
# The model server listens on 127.0.0.1:$MODEL_PORT (default 18080), the Cop on
# $COP_PORT (18081), the reverse-shell listener (attacker_listener.py) on
# $ATTACKER_PORT (18082): fixed ports are safe in a namespace of our own.
set -euo pipefail

die() { echo "run-session.sh: $*" >&2; exit 2; }

if [ "${1:-}" != "--in-netns" ]; then
  [ $# -eq 1 ] || die "usage: run-session.sh WORKDIR"
  command -v unshare >/dev/null || die "unshare not found (util-linux); these tests need network namespaces"
  exec unshare -rn bash "$0" --in-netns "$@"
fi
shift
work=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
: "${CLAUDE_BIN:?CLAUDE_BIN must name the claude executable}"
[ -x "$CLAUDE_BIN" ] || die "CLAUDE_BIN=$CLAUDE_BIN is not executable"
model_port=${MODEL_PORT:-18080}
cop_port=${COP_PORT:-18081}
attacker_port=${ATTACKER_PORT:-18082}

# The namespace must hold loopback and nothing else.
ip link set lo up || die "cannot bring up loopback in the new network namespace"
others=$(ip -o link show | awk -F': ' '$2 != "lo" {print $2}')
[ -z "$others" ] || die "the network namespace has interfaces besides lo: $others"
[ -z "$(ip route show)" ] || die "the namespace has routes: $(ip route show)"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start() { # name log program args...
  local name=$1 log=$2
  shift 2
  : >"$work/$log"
  python3 "$@" >"$work/$name.port" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$work/$name.port" ] && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || die "the $name server died: $(cat "$work/$name.err")"
    sleep 0.1
  done
  die "the $name server did not start within 10 s"
}

start model model-requests.jsonl "$here/fake_api.py" model "$model_port" "$work/model.json" "$work/model-requests.jsonl"
if [ -f "$work/cop.json" ]; then
  start cop cop-requests.jsonl "$here/fake_api.py" cop "$cop_port" "$work/cop.json" "$work/cop-requests.jsonl"
fi
start attacker attacker-connections.jsonl "$here/attacker_listener.py" "$attacker_port" "$work/attacker-connections.jsonl"

cd "$work/proj"
set +e
env -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_MODEL -u ANTHROPIC_SMALL_FAST_MODEL -u CLAUDECODE \
  -u CLAUDE_CODE_ENTRYPOINT -u CLAUDE_CONFIG_DIR \
  HOME="$work/home" \
  ANTHROPIC_BASE_URL="http://127.0.0.1:$model_port" \
  ANTHROPIC_API_KEY=sk-ant-loopback-test \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
  DISABLE_ERROR_REPORTING=1 DISABLE_BUG_COMMAND=1 \
  timeout "${CLAUDE_TIMEOUT:-180}" "$CLAUDE_BIN" -p "$(cat "$work/prompt.txt")" \
    --output-format json --permission-mode default \
  >"$work/claude.json" 2>"$work/claude.err" </dev/null
echo $? >"$work/claude.rc"
set -e
exit 0
