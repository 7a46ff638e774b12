#!/usr/bin/env python3
"""Runs every ```sh block of README.md and docs/getting-started.md as written.

Each block runs with `bash -e` from the repository's root, in page order,
with a scratch $HOME (so bashgate's state, audit and config are fresh) and
CDPATH pointing at a scratch directory that holds `your-project`. Cargo and
rustup keep their real homes; `cargo install` installs into the scratch
directory, which is first on PATH. A block whose first line is
`# exit: N` must end with status N; one whose first line says
`not run by .ci/docs.sh` is skipped (the README's own test command).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PAGES = ["README.md", "docs/getting-started.md"]
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


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
            if "not run by .ci/docs.sh" in first:
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
            if r.returncode != want:
                failures += 1
                print(f"!! {page} block {n}: exit {r.returncode}, expected {want}")
                print("   stdout: " + r.stdout[-3000:].replace("\n", "\n   "))
                print("   stderr: " + r.stderr[-3000:].replace("\n", "\n   "))
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree("/tmp/bashgate-demo", ignore_errors=True)
    print(f"docs: {ran} blocks run, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
