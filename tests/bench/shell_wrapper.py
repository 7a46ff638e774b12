#!/usr/bin/env python3
"""What bashgate-shell (Claude Code's CLAUDE_CODE_SHELL_PREFIX) adds to a
Bash command: Claude Code's own shell line around `git status --short`,
run as `bash -c LINE` and as `bashgate-shell LINE`, in a clean session (no
decision left: the wrapper decides itself), for a hook-like program the
client runs through it (`true`), and in a tainted session after the hook
left its decision to fence. Medians of interleaved rounds.

usage: tests/bench/shell_wrapper.py BIN_DIR [RUNS]
BIN_DIR holds bashgate, bashgate-hook and bashgate-shell (a release build).
Standard library only; everything happens in a temporary directory.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    bin_dir = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    shell, hook = os.path.join(bin_dir, "bashgate-shell"), os.path.join(bin_dir, "bashgate-hook")
    with tempfile.TemporaryDirectory(prefix="bashgate-bench-") as d:
        proj = os.path.join(d, "project")
        os.makedirs(proj)
        subprocess.run(["git", "init", "-q", proj], check=True)
        env = dict(
            os.environ,
            HOME=os.path.join(d, "home"),
            XDG_CONFIG_HOME=os.path.join(d, "xdg"),
            BASHGATE_STATE_DIR=os.path.join(d, "state"),
            CLAUDE_CODE_SHELL_PREFIX=shell,
        )
        env.pop("CLAUDE_PROJECT_DIR", None)
        env.pop("BASHGATE_CONFIG", None)
        subprocess.run([os.path.join(bin_dir, "bashgate"), "trust", proj], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        command = "git status --short"
        line = (
            "source /dev/null 2>/dev/null || true && "
            "{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && "
            f"eval '{command}' < /dev/null && pwd -P >| {d}/cwd"
        )

        def event(session, kind, tool, tool_input):
            return json.dumps({"session_id": session, "cwd": proj, "hook_event_name": kind,
                               "tool_name": tool, "tool_input": tool_input, "tool_response": {}}).encode()

        subprocess.run([hook, "claude"], input=event("tainted", "PostToolUse", "WebFetch", {"url": "https://x"}),
                       env=env, check=True, stdout=subprocess.DEVNULL)

        def timed(argv, e, before=None):
            out = []
            for i in range(runs + 10):
                if before:
                    before()
                t = time.perf_counter()
                r = subprocess.run(argv, env=e, cwd=proj, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                dt = (time.perf_counter() - t) * 1000
                if r.returncode != 0:
                    sys.exit(f"{argv[0]} exited {r.returncode}")
                if i >= 10:
                    out.append(dt)
            return statistics.median(out)

        def hook_decides():
            subprocess.run([hook, "claude"], input=event("tainted", "PreToolUse", "Bash", {"command": command}),
                           env=env, check=True, stdout=subprocess.DEVNULL)

        cases = {
            "bash -c LINE": lambda: timed(["bash", "-c", line], env),
            "bashgate-shell LINE, clean session": lambda: timed(
                [shell, line], dict(env, CLAUDE_CODE_SESSION_ID="clean")),
            "bashgate-shell running a client's own program (true)": lambda: timed(
                [shell, "true"], dict(env, CLAUDE_CODE_SESSION_ID="clean", CLAUDE_PROJECT_DIR=proj)),
            "bashgate-shell LINE, tainted, fenced (hook decided first, not timed)": lambda: timed(
                [shell, line], dict(env, CLAUDE_CODE_SESSION_ID="tainted"), before=hook_decides),
        }
        got = {k: [] for k in cases}
        for _ in range(3):
            for k, f in cases.items():
                got[k].append(f())
        for k, v in got.items():
            print(f"{k}: median {statistics.median(v):.2f} ms (rounds: {', '.join(f'{x:.2f}' for x in v)})")


if __name__ == "__main__":
    main()
