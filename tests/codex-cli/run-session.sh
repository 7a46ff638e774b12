#!/usr/bin/env bash
# Runs one headless Codex CLI session (`codex exec`) for bashgate's end-to-end
# tests, inside a fresh network namespace (`unshare -rn`: only loopback).
#
# usage: run-session.sh WORKDIR
#
# WORKDIR, prepared by tests/src/agent_e2e.rs:
#   proj/        Codex's working directory, holding .codex/hooks.json (written
#                by `bashgate init codex`) and .bashgate.toml
#   home/.codex/config.toml   the model provider (the stand-in) and the
#                project's trust
#   model.json   the scripted model (see fake_openai.py)
#   prompt.txt   the prompt given to `codex exec`
#   args.txt     optional: more arguments, one per line
# and afterwards: codex.out, codex.err, codex.rc, model-requests.jsonl.
#
# Environment: CODEX_BIN (required), CODEX_TIMEOUT (seconds, default 120); the
# stand-in listens on 127.0.0.1:$MODEL_PORT (default 18095).
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
: "${CODEX_BIN:?CODEX_BIN must name the codex executable}"
[ -x "$CODEX_BIN" ] || die "CODEX_BIN=$CODEX_BIN is not executable"
port=${MODEL_PORT:-18095}

ip link set lo up || die "cannot bring up loopback in the new network namespace"
others=$(ip -o link show | awk -F': ' '$2 != "lo" {print $2}')
[ -z "$others" ] || die "the network namespace has interfaces besides lo: $others"

: >"$work/model-requests.jsonl"
python3 "$here/fake_openai.py" "$port" "$work/model.json" "$work/model-requests.jsonl" \
  >"$work/model.port" 2>"$work/model.err" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  [ -s "$work/model.port" ] && break
  kill -0 $server 2>/dev/null || die "the model stand-in died: $(cat "$work/model.err")"
  sleep 0.1
done
[ -s "$work/model.port" ] || die "the model stand-in did not start within 10 s"

extra=()
if [ -f "$work/args.txt" ]; then
  mapfile -t extra <"$work/args.txt"
fi
cd "$work/proj"
set +e
env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u CODEX_API_KEY \
  HOME="$work/home" CODEX_HOME="$work/home/.codex" \
  LOOPBACK_API_KEY=sk-loopback-test NO_COLOR=1 \
  timeout "${CODEX_TIMEOUT:-120}" "$CODEX_BIN" exec --skip-git-repo-check "${extra[@]}" \
    "$(cat "$work/prompt.txt")" \
  >"$work/codex.out" 2>"$work/codex.err" </dev/null
echo $? >"$work/codex.rc"
set -e
exit 0
