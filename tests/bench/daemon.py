#!/usr/bin/env python3
"""The host daemon's checks per second on each store, next to its
reference in the same minutes: one daemon on SQLite, one on PostgreSQL,
and two daemons sharing one PostgreSQL, each a run of `bashgate-load`,
interleaved round by round. Prints each run, then each state's median and
its share of SQLite's in the same round.

Both stores sync each commit to disk (the load tool starts PostgreSQL with
fsync on); everything shares this machine's CPUs.

usage: tests/bench/daemon.py [--rounds N] [--checks N] [--clients N] [TARGET_DIR]
  TARGET_DIR holds bashgate and bashgate-load (default target/release):
  cargo build --release -p bashgate -p bashgate-tests --bin bashgate --bin bashgate-load
Standard library only.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

STATES = [
    ("1 daemon, SQLite", []),
    ("1 daemon, PostgreSQL", ["--postgres"]),
    ("2 daemons, one PostgreSQL", ["--daemons", "2", "--postgres"]),
]


def run(target, checks, clients, extra):
    argv = [os.path.join(target, "bashgate-load"),
            "--bashgate", os.path.join(target, "bashgate"),
            "--checks", str(checks), "--clients", str(clients)] + extra
    out = subprocess.run(argv, capture_output=True, text=True)
    text = out.stdout + out.stderr
    rate = re.search(r"\(([\d.]+) checks/s\)", text)
    p99 = re.search(r"p99 ([\d.]+) ms", text)
    errors = re.search(r"errors: (\d+)", text)
    if out.returncode != 0 or not rate or not p99:
        sys.exit(f"{' '.join(argv)} failed:\n{text}")
    return float(rate.group(1)), float(p99.group(1)), int(errors.group(1)) if errors else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--checks", type=int, default=20000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("target", nargs="?", default="target/release")
    a = ap.parse_args()
    results = {name: [] for name, _ in STATES}
    for r in range(a.rounds):
        sqlite = None
        for name, extra in STATES:
            rate, p99, errors = run(a.target, a.checks, a.clients, extra)
            sqlite = sqlite or rate
            results[name].append((rate, p99, rate / sqlite))
            print(f"round {r + 1}  {name:27} {rate:8.0f} checks/s  {rate / sqlite:5.0%}"
                  f"  p99 {p99:6.1f} ms  errors {errors}", flush=True)
    print()
    print(f"{'state':27} {'median':>14} {'of SQLite':>10} {'worst p99':>10}")
    for name, runs in results.items():
        print(f"{name:27} {statistics.median(x[0] for x in runs):8.0f} checks/s"
              f" {statistics.median(x[2] for x in runs):9.0%}"
              f" {max(x[1] for x in runs):7.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
