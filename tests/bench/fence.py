#!/usr/bin/env python3
"""What the fence adds to a command: `bashgate run -- true` against
`bash -c true` (the same command unfenced), and the everyday commands that
need no network (corpus/everyday/commands.toml) run one after another
under `bashgate run`, for each bashgate program given (a build before a
change and after it, say). Everything is interleaved, round by round, so
each figure sits next to its reference from the same minutes; medians.

Each command runs fenced, so none reaches the network; `bash -c true` runs
nothing else. Where util-linux's `unshare` works, two more references show
the least any fence can cost here: `bash -c true` started by a program
that waits for it (as a fence must, to check the tree after the command),
and the same in fresh user, network, mount and pid namespaces with a fresh
/proc and nothing else. The project is a fresh git repository with one commit in a
temporary directory, with its own home and state directory.

usage: tests/bench/fence.py [--rounds N] [--runs N] BASHGATE [BASHGATE...]
Standard library only.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def everyday():
    with open(os.path.join(ROOT, "corpus/everyday/commands.toml"), "rb") as f:
        listed = tomllib.load(f)["command"]
    # `npx` fetches a package it does not find, and waits out npm's
    # retries with no network: not a measure of the fence.
    return [c["run"] for c in listed
            if not c.get("network", False) and not c["run"].startswith("npx ")]


# `argv[0]` is a path. Started with posix_spawn, which the C library does without copying
# Python's memory (subprocess forks it, about 0.3 ms more a run), and
# waited for without a timeout (with one, Python polls with growing sleeps).
def timed(argv, env, cwd):
    null = os.open(os.devnull, os.O_RDWR)
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(cwd)
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
            (os.POSIX_SPAWN_DUP2, null, 2)])
        os.waitpid(pid, 0)
        return time.perf_counter() - t0
    finally:
        os.fchdir(here)
        os.close(here)
        os.close(null)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=100, help="runs of each short command per round")
    ap.add_argument("bashgate", nargs="+")
    a = ap.parse_args()
    programs = [os.path.abspath(b) for b in a.bashgate]
    commands = everyday()
    with tempfile.TemporaryDirectory(prefix="bashgate-fence-bench-") as d:
        proj = os.path.join(d, "project")
        os.makedirs(os.path.join(proj, "src"))
        with open(os.path.join(proj, "src", "main.rs"), "w") as f:
            f.write("fn main() {}\n")
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
        subprocess.run(["git", "init", "-q", proj], check=True)
        subprocess.run(git + ["-C", proj, "add", "-A"], check=True)
        subprocess.run(git + ["-C", proj, "commit", "-qm", "one"], check=True)
        # The fence keeps git's answer only for files older than 2 s (a
        # file's clock ticks coarser than an edit): a repository made just
        # now would ask git on every run, which no settled project does.
        time.sleep(2.5)
        home = os.path.join(d, "home")
        os.makedirs(home)
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(d, "xdg"),
                   BASHGATE_STATE_DIR=os.path.join(d, "state"))
        env.pop("BASHGATE_CONFIG", None)
        bash, unshare = shutil.which("bash"), shutil.which("unshare")
        short = {"bash -c true": [bash, "-c", "true"]}
        wrapped = [unshare, "--fork", "bash", "-c", "true"]
        fresh = [unshare, "--user", "--map-current-user", "--net", "--mount",
                 "--pid", "--fork", "--mount-proc", "bash", "-c", "true"]
        for name, argv in [("unshare --fork bash -c true", wrapped),
                           ("unshare (4 namespaces) bash -c true", fresh)]:
            works = unshare is not None and subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
            if works:
                short[name] = argv
        for i, b in enumerate(programs):
            short[f"[{i}] bashgate run -- true"] = [b, "run", "--", "true"]
        times = {k: [] for k in short}
        suite = {i: [] for i in range(len(programs))}
        for _ in range(a.rounds):
            for _ in range(a.runs):
                for k, argv in short.items():
                    times[k].append(timed(argv, env, proj))
            for i, b in enumerate(programs):
                total = 0.0
                for c in commands:
                    total += timed([b, "run", "-c", c], env, proj)
                suite[i].append(total)
        for i, b in enumerate(programs):
            print(f"[{i}] {b}")
        print(f"{'command':40} {'median':>10}")
        for k, v in times.items():
            print(f"{k:40} {statistics.median(v) * 1000:8.2f} ms")
        for i in suite:
            print(f"{f'[{i}] {len(commands)} everyday commands, fenced':40} "
                  f"{statistics.median(suite[i]) * 1000:8.0f} ms (total, median of {a.rounds})")


if __name__ == "__main__":
    sys.exit(main())
