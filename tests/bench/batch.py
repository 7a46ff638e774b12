#!/usr/bin/env python3
"""Batch throughput: `bashgate analyze --jsonl` against the seed's regex
classifier (seed_classifier.py), each a whole process over the same JSON
lines, interleaved round by round so both see the same machine.

    cargo build --release -p bashgate
    python3 tests/bench/batch.py [--rounds N] [--bin target/release/bashgate] FILE.jsonl...

With no FILE, the shared corpora's tldr and NL2Bash sets are used
(../shared/corpora/, read in place, never copied). Prints the median wall
time of each, commands per second, and bashgate's rate over the seed's;
`bashgate, one core` runs it under `taskset -c 0` where taskset exists.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPORA = os.path.join(os.path.dirname(ROOT), "shared", "corpora")


def timed(argv, data):
    start = time.perf_counter()
    done = subprocess.run(argv, input=data, stdout=subprocess.PIPE, check=True)
    elapsed = time.perf_counter() - start
    return elapsed, done.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "bashgate"))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or [
        os.path.join(CORPORA, "tldr.jsonl"),
        os.path.join(CORPORA, "nl2bash.jsonl"),
    ]
    data = b"".join(open(f, "rb").read() for f in files)
    count = sum(1 for line in data.splitlines() if line.strip())
    runs = {
        "bashgate analyze --jsonl": [args.bin, "analyze", "--jsonl"],
        "seed regex classifier": [sys.executable, os.path.join(HERE, "seed_classifier.py")],
    }
    if shutil.which("taskset"):
        runs["bashgate, one core"] = ["taskset", "-c", "0", args.bin, "analyze", "--jsonl"]
    # Both must have answered every line.
    for name, argv in runs.items():
        _, out = timed(argv, data)
        lines = out.count(b"\n")
        if lines != count:
            sys.exit(f"{name}: {lines} lines out for {count} in")
    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, argv in runs.items():
            times[name].append(timed(argv, data)[0])
    medians = {name: statistics.median(t) for name, t in times.items()}
    seed = medians["seed regex classifier"]
    print(f"{count} commands, {args.rounds} rounds interleaved; medians of whole processes")
    print(f"{'':<28} {'seconds':>8} {'commands/s':>11} {'x seed':>7}")
    for name, m in medians.items():
        print(f"{name:<28} {m:>8.3f} {count / m:>11,.0f} {seed / m:>7.2f}")


if __name__ == "__main__":
    main()
