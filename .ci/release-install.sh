#!/usr/bin/env bash
# The release path end to end, as a new user meets it: .ci/release.sh packs
# the x86_64 Linux archive, install.sh installs it into a scratch home, and
# a fresh git project is gated with `bashgate init claude` and answers one
# hook call. Also checks that install.sh refuses a tampered archive and one
# without a checksum, installing nothing, and that a local install uses no
# network. Fails if archive-to-gated-project takes over 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
limit_s=60

fail() {
  echo "release-install.sh: FAILED: $*" >&2
  exit 1
}

for tool in git sh od dd awk stat; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== release-install: pack $target"
bash .ci/release.sh "$target" "$work/dist"
archives=("$work"/dist/bashgate-*-"$target".tar.gz)
[ "${#archives[@]}" -eq 1 ] && [ -f "${archives[0]}" ] ||
  fail "expected one archive in $work/dist, found: ${archives[*]}"
archive=${archives[0]}
[ -f "$archive.sha256" ] || fail "no $archive.sha256"
version=$(basename "$archive")
version=${version#bashgate-}
version=${version%-"$target".tar.gz}
(cd "$work/dist" && sha256sum -c "$(basename "$archive").sha256") ||
  fail "the .sha256 release.sh wrote does not check"

# A new user: an empty home, none of this machine's bashgate settings, and
# a curl and wget that fail the run if install.sh reaches for the network
# with a local archive.
home=$work/home
mkdir -p "$home" "$work/no-net"
for net in curl wget; do
  printf '#!/bin/sh\necho "install.sh ran %s $*" >>%q/net.log\nexit 1\n' "$net" "$work" >"$work/no-net/$net"
  chmod +x "$work/no-net/$net"
done
as_new_user() {
  env -u BASHGATE_CONFIG -u BASHGATE_STATE_DIR -u BASHGATE_TOKEN \
    -u BASHGATE_PROJECT_DIR -u BASHGATE_SESSION \
    -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME \
    HOME="$home" PATH="$work/bin:$work/no-net:$PATH" "$@"
}

echo "== release-install: a tampered archive is refused"
mkdir "$work/tampered"
bad=$work/tampered/$(basename "$archive")
cp "$archive" "$bad"
cp "$archive.sha256" "$bad.sha256"
# One byte in the middle of the compressed data, changed.
size=$(stat -c %s "$bad")
offset=$((size / 2))
byte=$(od -An -tu1 -j "$offset" -N 1 "$bad" | tr -d ' ')
printf "\\$(printf '%03o' $(((byte + 1) % 256)))" |
  dd of="$bad" bs=1 seek="$offset" conv=notrunc status=none
cmp -s "$archive" "$bad" && fail "the tampered copy is not different"
status=0
as_new_user sh install.sh --from "$bad" --to "$work/bin-tampered" >"$work/tampered.log" 2>&1 || status=$?
cat "$work/tampered.log"
[ "$status" -ne 0 ] || fail "install.sh accepted a tampered archive"
grep -q 'SHA-256 mismatch' "$work/tampered.log" || fail "install.sh did not say why it refused the tampered archive"
if [ -d "$work/bin-tampered" ] && [ -n "$(ls -A "$work/bin-tampered")" ]; then
  fail "install.sh refused the tampered archive but left files: $(ls -A "$work/bin-tampered")"
fi

echo "== release-install: an archive without a checksum is refused"
mkdir "$work/unchecked"
cp "$archive" "$work/unchecked/"
status=0
as_new_user sh install.sh --from "$work/unchecked/$(basename "$archive")" --to "$work/bin-unchecked" || status=$?
[ "$status" -ne 0 ] || fail "install.sh installed an archive it could not check"
[ ! -e "$work/bin-unchecked" ] || [ -z "$(ls -A "$work/bin-unchecked")" ] ||
  fail "install.sh refused an unchecked archive but left files"

echo "== release-install: install and gate a project (limit ${limit_s} s)"
bin=$work/bin
project=$work/project
start=$(date +%s.%N)
as_new_user sh install.sh --from "$archive" --to "$bin"
mkdir "$project"
git -C "$project" init -q
(cd "$project" && as_new_user bashgate init claude)
# The hook command as Claude Code runs it: the settings' own text, by sh.
hook=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["PreToolUse"][0]["hooks"][0]["command"])' "$project/.claude/settings.json")
event=$(printf '{"session_id":"s","transcript_path":"/dev/null","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' "$project")
answer=$(cd "$project" && printf '%s' "$event" | as_new_user sh -c "$hook") ||
  fail "the hook command failed: $answer"
end=$(date +%s.%N)
elapsed=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
echo "hook answer for ls: $answer"
echo "archive to gated project: $elapsed s"

[ ! -e "$work/net.log" ] || fail "install.sh used the network for a local archive: $(cat "$work/net.log")"
for p in bashgate bashgate-hook bashgate-shell; do
  [ -f "$bin/$p" ] || fail "$bin/$p is not installed"
  [ "$(stat -c %a "$bin/$p")" = 755 ] || fail "$bin/$p has mode $(stat -c %a "$bin/$p"), not 755"
done
leftover=$(ls -A "$bin" | grep -v -x -e bashgate -e bashgate-hook -e bashgate-shell || true)
[ -z "$leftover" ] || fail "install.sh left other files in $bin: $leftover"
out=$("$bin/bashgate" --version) || fail "bashgate --version failed"
case $out in
  *"$version"*) echo "installed: $out" ;;
  *) fail "bashgate --version says \"$out\", the archive is $version" ;;
esac
settings=$project/.claude/settings.json
[ -f "$settings" ] || fail "bashgate init claude wrote no $settings"
# With the install on PATH, init writes no path of this machine: a team
# can commit the file.
grep -qF "exec bashgate-hook claude" "$settings" ||
  fail "$settings does not find bashgate-hook through PATH: $(cat "$settings")"
if grep -qF "$bin" "$settings"; then
  fail "$settings names this machine's $bin: $(cat "$settings")"
fi
# A teammate without bashgate: the hook stops the call (exit 2, a block
# to Claude Code) and says why.
status=0
printf '%s' "$event" | env -i PATH=/usr/bin:/bin HOME="$home" sh -c "$hook" >/dev/null 2>"$work/missing.log" || status=$?
[ "$status" -eq 2 ] || fail "without bashgate the hook exited $status, not 2 (a client lets any other failure pass)"
grep -q "bashgate is not installed" "$work/missing.log" || fail "without bashgate the hook did not say why: $(cat "$work/missing.log")"
case $answer in
  *'"deny"'* | *'"ask"'*) fail "the hook did not let ls through: $answer" ;;
esac

awk -v t="$elapsed" -v l="$limit_s" 'BEGIN { exit !(t <= l) }' ||
  fail "archive to gated project took $elapsed s, over $limit_s s"
echo "== release-install: ok ($elapsed s)"
