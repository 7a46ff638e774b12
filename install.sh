#!/bin/sh
# Installs bashgate's programs (bashgate, bashgate-hook, bashgate-shell)
# from a release archive, after checking its SHA-256.
#
#   curl -fsSL https://github.com/OWNER/REPO/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --version 0.1.0 --to /usr/local/bin
#   sh install.sh --from ./bashgate-0.1.0-x86_64-unknown-linux-gnu.tar.gz
#
# Options:
#   --from FILE|URL  the archive (default: the GitHub release's archive
#                    for this machine)
#   --version V      the release to download (default: the latest)
#   --to DIR         where the programs go (default: $HOME/.local/bin)
#   --sha256 HEX     the archive's expected SHA-256 (default: read from
#                    ARCHIVE.sha256 beside it, or from the URL + .sha256)
#
# An archive whose checksum is missing or does not match is refused, and
# nothing is installed. A local --from uses no network at all.
#
# Environment: BASHGATE_REPO=owner/name, the GitHub repository to download
# from.
#
# Everything runs from main at the end: a download cut short by the
# network runs nothing.

REPO=${BASHGATE_REPO:-bashgate/bashgate}

set -eu

PROGRAMS="bashgate bashgate-hook bashgate-shell"

say() { printf '%s\n' "$*"; }
fail() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
usage: install.sh [--from FILE|URL] [--version V] [--to DIR] [--sha256 HEX]
  --from FILE|URL  the release archive (default: the GitHub release's
                   archive for this machine)
  --version V      the release to download (default: the latest)
  --to DIR         where to put the programs (default: $HOME/.local/bin)
  --sha256 HEX     the archive's SHA-256 (default: ARCHIVE.sha256 beside it)
EOF
}

# The release target this machine runs: the archives are named after it.
detect_target() {
  os=$(uname -s)
  arch=$(uname -m)
  case $os in
    Linux) os=unknown-linux-gnu ;;
    Darwin)
      os=apple-darwin
      # A shell under Rosetta reports x86_64 on Apple silicon; the native
      # program is the better one to install.
      if [ "$arch" = x86_64 ] &&
        [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
        arch=arm64
      fi
      ;;
    *) fail "no release for $os; build from source (see the README)" ;;
  esac
  case $arch in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) fail "no release for $arch ($os); build from source (see the README)" ;;
  esac
  printf '%s-%s\n' "$arch" "$os"
}

# download URL FILE
download() {
  case $1 in
    # Refuse to be redirected from HTTPS to anything weaker.
    https://*) proto="=https" ;;
    *) proto="=http,https" ;;
  esac
  if command -v curl >/dev/null 2>&1; then
    curl --proto "$proto" --proto-redir "$proto" -fsSL -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "neither curl nor wget is installed; download the archive and its .sha256 yourself and use --from"
  fi
}

# The newest release's version, from where github.com/REPO/releases/latest
# redirects to (.../releases/tag/vX.Y.Z): no API, no JSON to parse.
latest_version() {
  page="https://github.com/$REPO/releases/latest"
  if command -v curl >/dev/null 2>&1; then
    url=$(curl --proto '=https' -fsSL -o /dev/null -w '%{url_effective}' "$page") ||
      fail "could not reach $page"
  elif command -v wget >/dev/null 2>&1; then
    url=$(wget -q -S -O /dev/null "$page" 2>&1 | sed -n 's/^ *[Ll]ocation: *//p' | tail -n 1 | tr -d '\r') ||
      fail "could not reach $page"
  else
    fail "neither curl nor wget is installed; download the archive and its .sha256 yourself and use --from"
  fi
  case $url in
    */releases/tag/v*) printf '%s\n' "${url##*/releases/tag/v}" ;;
    *) fail "$REPO has no release yet ($page led to $url); use --from" ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "neither sha256sum nor shasum is installed, so the archive cannot be checked; nothing installed"
  fi
}

# A SHA-256 as 64 lower-case hex digits, or nothing if it is not one.
normal_hex() {
  h=$(printf '%s' "$1" | tr 'A-F' 'a-f')
  case $h in
    *[!0-9a-f]*) return 0 ;;
  esac
  [ ${#h} -eq 64 ] && printf '%s\n' "$h"
  return 0
}

main() {
  from="" version="" to="" want=""
  while [ $# -gt 0 ]; do
    case $1 in
      --from=*) from=${1#*=} ;;
      --version=*) version=${1#*=} ;;
      --to=*) to=${1#*=} ;;
      --sha256=*) want=${1#*=} ;;
      --from | --version | --to | --sha256)
        [ $# -ge 2 ] || fail "$1 needs a value"
        case $1 in
          --from) from=$2 ;;
          --version) version=$2 ;;
          --to) to=$2 ;;
          --sha256) want=$2 ;;
        esac
        shift
        ;;
      -h | --help)
        usage
        exit 0
        ;;
      *)
        usage >&2
        fail "unknown argument $1"
        ;;
    esac
    shift
  done
  if [ -z "$to" ]; then
    [ -n "${HOME:-}" ] || fail "HOME is not set; say where with --to DIR"
    to=$HOME/.local/bin
  fi
  if [ -n "$want" ]; then
    hex=$(normal_hex "$want")
    [ -n "$hex" ] || fail "--sha256 $want is not a SHA-256 (64 hex digits)"
    want=$hex
  fi
  [ -z "$from" ] || [ -z "$version" ] || fail "--from and --version do not go together: --from names the archive"

  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t bashgate-install) ||
    fail "could not create a temporary directory"
  # Remove what this run made and did not finish: the download, the
  # unpacked archive, and half-copied programs in DIR.
  trap 'rm -rf "$tmp"; for p in $PROGRAMS; do rm -f "$to/.$p.tmp"; done' EXIT
  trap 'exit 1' HUP INT TERM

  # Where the archive is, and where its checksum comes from.
  case $from in
    "" | http://* | https://*)
      if [ -z "$from" ]; then
        target=$(detect_target)
        [ -n "$version" ] || version=$(latest_version)
        version=${version#v}
        from="https://github.com/$REPO/releases/download/v$version/bashgate-$version-$target.tar.gz"
      fi
      case $from in
        # A checksum from the same plain-HTTP server proves nothing.
        http://*) [ -n "$want" ] || fail "$from is plain HTTP: give --sha256 from a source you trust, or use HTTPS" ;;
      esac
      archive=$tmp/${from##*/}
      say "downloading $from"
      download "$from" "$archive" || fail "could not download $from"
      if [ -z "$want" ]; then
        download "$from.sha256" "$tmp/archive.sha256" ||
          fail "could not download $from.sha256, so the archive cannot be checked; nothing installed (--sha256 HEX gives the checksum)"
        sums=$tmp/archive.sha256
      fi
      ;;
    *)
      [ -f "$from" ] || fail "$from: no such file"
      archive=$from
      if [ -z "$want" ]; then
        [ -f "$from.sha256" ] ||
          fail "$from.sha256 is missing, so $from cannot be checked; nothing installed (put the release's .sha256 beside it, or give --sha256 HEX)"
        sums=$from.sha256
      fi
      ;;
  esac

  # The check: sha256sum's format, "HEX  NAME"; the hex is what counts
  # (a renamed archive is still the same archive).
  if [ -z "$want" ]; then
    first=""
    # A last line without a newline still reads; read's status says EOF.
    read -r first _ <"$sums" || true
    want=$(normal_hex "$first")
    [ -n "$want" ] || fail "$sums holds no SHA-256; nothing installed"
  fi
  got=$(sha256_of "$archive")
  [ -n "$got" ] || fail "could not compute the SHA-256 of $archive; nothing installed"
  if [ "$got" != "$want" ]; then
    fail "SHA-256 mismatch: $archive is $got, expected $want; the archive is damaged or not the release's. Nothing installed."
  fi
  say "SHA-256 verified: $got"

  mkdir "$tmp/x"
  tar -xzf "$archive" -C "$tmp/x" || fail "could not unpack $archive"
  # The archive holds one directory, bashgate-VERSION-TARGET/.
  src=""
  for d in "$tmp"/x/bashgate-*/; do
    [ -d "$d" ] || continue
    [ -z "$src" ] || fail "$archive holds more than one bashgate-* directory"
    src=${d%/}
  done
  [ -n "$src" ] || fail "$archive does not hold a bashgate-VERSION-TARGET directory"
  for p in $PROGRAMS; do
    [ -f "$src/$p" ] || fail "$archive has no $p"
  done

  mkdir -p "$to" || fail "could not create $to"
  # Copy each program beside its final place, then rename it there: a
  # rename is atomic, so a client running the hook meanwhile starts either
  # the old program or the new one, never half of one.
  for p in $PROGRAMS; do
    cp "$src/$p" "$to/.$p.tmp" || fail "could not write to $to"
    chmod 0755 "$to/.$p.tmp"
  done
  # Before replacing anything: does the new bashgate run here at all (an
  # archive for another machine would not)?
  "$to/.bashgate.tmp" --version >/dev/null 2>&1 ||
    fail "$src/bashgate does not run on this machine ($(uname -s) $(uname -m)); is the archive for another platform? Nothing installed."
  for p in $PROGRAMS; do
    mv -f "$to/.$p.tmp" "$to/$p"
  done

  say "installed $("$to/bashgate" --version) into $to:"
  for p in $PROGRAMS; do
    say "  $to/$p"
  done
  case ":${PATH:-}:" in
    *":$to:"*) ;;
    *)
      say ""
      say "note: $to is not on your PATH; add it, for example in ~/.profile:"
      say "  export PATH=\"$to:\$PATH\""
      ;;
  esac
  say ""
  say "next: in each project to gate,"
  say "  cd your-project && bashgate init claude"
  say "(also codex, gemini, copilot and cursor; \`bashgate doctor\` checks the hooks fire)"
}

main "$@"
