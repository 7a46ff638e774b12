#!/usr/bin/env python3
"""Runs every ```sh block of README.md and docs/getting-started.md as written.

Each block runs with `bash -e` from the repository's root, in page order,
with a scratch $HOME (so bashgate's state, audit and config are fresh) and
CDPATH pointing at a scratch directory that holds `your-project`. Cargo and
rustup keep their real homes; `cargo install` installs into the scratch
directory, which is first on PATH. A block whose first line is
`# exit: N` must end with status N; one whose first line says
`not run by .ci/docs.py` is skipped (the README's own test command).

A plain ``` block right after a ```sh block is the output the page shows
for it: the block's standard output must match it line by line (trailing
spaces aside), where `...` in a shown line stands for any text (a path
that differs from machine to machine).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PAGES = ["README.md", "docs/getting-started.md"]
BLOCK = re.compile(r"^```sh\n(.*?)^```\n(?:\n*^```\n(.*?)^```)?", re.S | re.M)


def shown_matches(shown: str, got: str) -> str | None:
    """None when `got` is the output `shown`; otherwise what differs."""
    want = [l.rstrip() for l in shown.rstrip("\n").split("\n")]
    have = [l.rstrip() for l in got.rstrip("\n").split("\n")]
    if len(want) != len(have):
        return f"{len(have)} lines, the page shows {len(want)}"
    for i, (w, h) in enumerate(zip(want, have), 1):
        pattern = ".*".join(re.escape(part) for part in w.split("..."))
        if not re.fullmatch(pattern, h):
            return f"line {i}: got {h!r}, the page shows {w!r}"
    return None


def main() -> int:
    scratch = tempfile.mkdtemp(prefix="bashgate-docs-")
    home = os.path.join(scratch, "home")
    root = os.path.join(scratch, "cargo-root")
    os.makedirs(os.path.join(scratch, "your-project"))
    os.makedirs(home)
    env = dict(os.environ)
    env.update(
        HOME=home,
        CDPATH=scratch,
        CARGO_HOME=os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")),
        RUSTUP_HOME=os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup")),
        CARGO_INSTALL_ROOT=root,
        CARGO_TARGET_DIR=os.path.join(ROOT, "target", "docs-install"),
        PATH=os.path.join(root, "bin") + os.pathsep + os.environ["PATH"],
    )
    for var in ("BASHGATE_CONFIG", "BASHGATE_TOKEN", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(var, None)
    shutil.rmtree("/tmp/bashgate-demo", ignore_errors=True)
    failures = 0
    ran = 0
    for page in PAGES:
        text = open(os.path.join(ROOT, page), encoding="utf-8").read()
        for n, m in enumerate(BLOCK.finditer(text), 1):
            block = m.group(1)
            first = block.splitlines()[0] if block.strip() else ""
            if "not run by .ci/docs.py" in first:
                print(f"-- {page} block {n}: skipped ({first.strip('# ')})")
                continue
            want = 0
            e = re.match(r"#\s*exit:\s*(\d+)", first)
            if e:
                want = int(e.group(1))
            print(f"-- {page} block {n} (expects exit {want})")
            print("   " + block.rstrip().replace("\n", "\n   "))
            r = subprocess.run(
                ["bash", "-e", "-c", block],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
            )
            ran += 1
            differs = shown_matches(m.group(2), r.stdout) if m.group(2) is not None else None
            if r.returncode != want or differs:
                failures += 1
                if r.returncode != want:
                    print(f"!! {page} block {n}: exit {r.returncode}, expected {want}")
                if differs:
                    print(f"!! {page} block {n}: its output is not what the page shows: {differs}")
                print("   stdout: " + r.stdout[-3000:].replace("\n", "\n   "))
                print("   stderr: " + r.stderr[-3000:].replace("\n", "\n   "))
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree("/tmp/bashgate-demo", ignore_errors=True)
    print(f"docs: {ran} blocks run, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
