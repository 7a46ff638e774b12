#!/usr/bin/env bash
# Builds the release programs for one target and packs them, for
# .github/workflows/release.yml and for trying a release locally:
#
#   .ci/release.sh TARGET [OUTDIR]
#
# writes OUTDIR/bashgate-VERSION-TARGET.tar.gz (one top-level directory of
# that name holding bashgate, bashgate-hook, bashgate-shell, README.md and
# any LICENSE* file) and, beside it, ARCHIVE.sha256 in sha256sum's format.
# OUTDIR defaults to release-artifacts in cargo's target directory
# (target/release-artifacts unless CARGO_TARGET_DIR says otherwise).
#
# The build is the README's: profile dist (whole-program LTO), and on Linux
# linked statically (+crt-static), so the archive runs on any Linux of its
# architecture whatever its libc. macOS programs link libSystem dynamically,
# as every macOS program must.
#
# Written for bash 3.2 as well: macOS runners' /usr/bin/env bash is 3.2.
set -euo pipefail

fail() {
  echo "release.sh: FAILED: $*" >&2
  exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
  echo "usage: .ci/release.sh TARGET [OUTDIR]   (e.g. x86_64-unknown-linux-gnu)" >&2
  exit 2
fi
target=$1
outdir=${2:-}
# OUTDIR is the caller's: resolve it before moving to the repository's root.
if [ -n "$outdir" ]; then
  case $outdir in
    /*) ;;
    *) outdir=$PWD/$outdir ;;
  esac
fi
cd "$(dirname "$0")/.."

for tool in cargo python3 tar; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed"
done
if command -v sha256sum >/dev/null; then
  sha256() { sha256sum "$@"; }
elif command -v shasum >/dev/null; then
  sha256() { shasum -a 256 "$@"; }
else
  fail "neither sha256sum nor shasum is installed"
fi

echo "== release: $target"
# The version and the target directory as cargo sees them (the version is
# the workspace's, inherited by gate/cli; a grep of Cargo.toml would have
# to know that).
meta=$(cargo metadata --no-deps --format-version 1)
{ read -r version; read -r target_dir; } < <(printf '%s' "$meta" | python3 -c '
import json, sys
m = json.load(sys.stdin)
v = [p["version"] for p in m["packages"] if p["name"] == "bashgate"]
if len(v) != 1:
    sys.exit("no package named bashgate in the workspace")
print(v[0])
print(m["target_directory"])
') || fail "could not read the version of package bashgate from cargo metadata"
[ -n "$version" ] || fail "empty version"
outdir=${outdir:-$target_dir/release-artifacts}

case $target in
  *-linux-*)
    # RUSTFLAGS, not --config build.rustflags: a RUSTFLAGS from the
    # environment (some CI set-ups export one) would silently replace
    # build.rustflags, and with it the static link. With --target given,
    # RUSTFLAGS reaches only the target's code, not build scripts.
    [ -z "${CARGO_ENCODED_RUSTFLAGS:-}" ] ||
      fail "CARGO_ENCODED_RUSTFLAGS is set; cargo would use it instead of RUSTFLAGS and drop +crt-static"
    export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static"
    ;;
esac

echo "-- cargo build (profile dist, bashgate $version)"
cargo build --locked --profile dist --target "$target" -p bashgate

programs="bashgate bashgate-hook bashgate-shell"
built=$target_dir/$target/dist
for p in $programs; do
  [ -f "$built/$p" ] || fail "cargo did not produce $built/$p"
done

case $target in
  *-linux-*)
    # A dynamically linked program names its loader in an INTERP header;
    # a static one has none. readelf comes with binutils, which the link
    # itself needs.
    command -v readelf >/dev/null || fail "\`readelf\` (binutils) is not installed; it checks the programs are static"
    for p in $programs; do
      headers=$(readelf -lW "$built/$p") || fail "readelf cannot read $built/$p"
      if printf '%s\n' "$headers" | grep -qw INTERP; then
        fail "$p is dynamically linked; +crt-static did not apply (RUSTFLAGS=$RUSTFLAGS)"
      fi
    done
    ;;
esac

# Run what this machine can run: a cross-built program would not start.
host=$(rustc -vV | sed -n 's/^host: //p')
if [ "$host" = "$target" ]; then
  for p in bashgate bashgate-hook; do
    out=$("$built/$p" --version) || fail "$p --version failed"
    case $out in
      *"$version"*) ;;
      *) fail "$p --version says \"$out\", not version $version" ;;
    esac
  done
else
  echo "-- $target is not this machine's ($host): the programs are not run"
fi

name=bashgate-$version-$target
archive=$name.tar.gz
mkdir -p "$outdir"
stage=$(mktemp -d "$outdir/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
for p in $programs; do
  cp "$built/$p" "$stage/$name/$p"
  chmod 0755 "$stage/$name/$p"
done
cp README.md "$stage/$name/"
docs="README.md"
for f in LICENSE*; do
  [ -f "$f" ] || continue
  cp "$f" "$stage/$name/"
  docs="$docs $f"
done
# The archive is meant to be unpacked anywhere: plain files, read-only for
# others.
chmod 0644 "$stage/$name/README.md"
chmod 0755 "$stage/$name"

rm -f "$outdir/$archive" "$outdir/$archive.sha256"
# COPYFILE_DISABLE: macOS's tar would otherwise add ._* files for extended
# attributes.
COPYFILE_DISABLE=1 tar -czf "$outdir/$archive" -C "$stage" "$name"
# sha256sum's own format ("HEX  NAME"), with the bare file name, so that
# `sha256sum -c` works in the directory of the download and the release's
# SHA256SUMS is these files concatenated.
(cd "$outdir" && sha256 "$archive" >"$archive.sha256")

echo "== release: produced"
echo "  $outdir/$archive ($(wc -c <"$outdir/$archive" | tr -d ' ') bytes)"
echo "    $programs $docs"
echo "  $outdir/$archive.sha256"
echo "    $(cat "$outdir/$archive.sha256")"
