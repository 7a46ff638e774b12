#!/usr/bin/env bash
# Runs one headless Gemini CLI session for bashgate's end-to-end tests, inside a
# fresh network namespace (`unshare -rn`: only loopback exists, so no packet can
# leave the machine).
#
# usage: run-session.sh WORKDIR
#
# WORKDIR, prepared by tests/src/agent_e2e.rs:
#   proj/        Gemini CLI's working directory, holding .gemini/settings.json
#                (written by `bashgate init gemini`) and .bashgate.toml
#   home/        HOME for Gemini CLI: ~/.gemini/settings.json (API-key auth) and
#                ~/.gemini/trustedFolders.json (the project trusted)
#   model.json   the scripted model (see fake_gemini.py)
#   prompt.txt   the prompt given to `gemini -p`
#   args.txt     optional: more arguments, one per line (--approval-mode yolo)
# and afterwards: gemini.json (its --output-format json result), gemini.err,
# gemini.rc, model-requests.jsonl (every request the stand-in received).
#
# Environment: GEMINI_BIN (required), GEMINI_TIMEOUT (seconds, default 120);
# the rest reaches Gemini CLI and, through it, the hook. The stand-in listens
# on 127.0.0.1:$MODEL_PORT (default 18090).
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
: "${GEMINI_BIN:?GEMINI_BIN must name the gemini executable}"
[ -x "$GEMINI_BIN" ] || die "GEMINI_BIN=$GEMINI_BIN is not executable"
port=${MODEL_PORT:-18090}

ip link set lo up || die "cannot bring up loopback in the new network namespace"
others=$(ip -o link show | awk -F': ' '$2 != "lo" {print $2}')
[ -z "$others" ] || die "the network namespace has interfaces besides lo: $others"

: >"$work/model-requests.jsonl"
python3 "$here/fake_gemini.py" "$port" "$work/model.json" "$work/model-requests.jsonl" \
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
env -u GOOGLE_API_KEY -u GOOGLE_GENAI_USE_VERTEXAI -u GOOGLE_GENAI_USE_GCA -u GOOGLE_CLOUD_PROJECT \
  HOME="$work/home" \
  GEMINI_API_KEY=loopback-test-key \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" \
  GEMINI_CLI_NO_RELAUNCH=true NO_COLOR=1 \
  timeout "${GEMINI_TIMEOUT:-120}" "$GEMINI_BIN" -p "$(cat "$work/prompt.txt")" \
    --output-format json "${extra[@]}" \
  >"$work/gemini.json" 2>"$work/gemini.err" </dev/null
echo $? >"$work/gemini.rc"
set -e
exit 0
