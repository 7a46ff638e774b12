#!/usr/bin/env bash
# Builds the cargo-fuzz targets (nightly) and runs each one briefly over its
# seed corpus (issue 4). A crash, timeout, out-of-memory or broken invariant
# fails the run. Campaigns proper are longer: see docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${BASHGATE_FUZZ_SECONDS:-30}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "cargo-fuzz needs the nightly toolchain: rustup toolchain install nightly" >&2
  exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz from crates.io"
  cargo install cargo-fuzz --locked
fi

cargo +nightly run -q --release --bin seed-corpora
cargo +nightly fuzz build -O

# The logs go beside the fuzz builds' own files; with CARGO_TARGET_DIR set
# elsewhere, fuzz/target does not exist yet.
mkdir -p target
for target in analyze generated catalog; do
  echo "-- fuzz $target for ${seconds}s"
  log="target/ci-fuzz-$target.log"
  status=0
  cargo +nightly fuzz run -O "$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 >"$log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|Done)' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -40 "$log" >&2
    echo "fuzz target $target failed; the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
done
