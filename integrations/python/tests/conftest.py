"""Fixtures: the real bashgate binary, an isolated configuration and state
directory per test, and real Agents SDK requests."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from agents import (
    LocalShellCommandRequest,
    RunContextWrapper,
    ShellActionRequest,
    ShellCallData,
    ShellCommandRequest,
)
from openai.types.responses.response_output_item import LocalShellCall, LocalShellCallAction

from bashgate_agents import Gate

REPO = Path(__file__).resolve().parents[3]

# The Cop's key variable names one that is never set, so no test can reach an
# LLM, and every decision the tests see is bashgate's own.
# Top-level (dotted) keys only, so a test can append keys or tables after it.
BASE_CONFIG = """\
on_error = "deny"
cop.api_key_env = "BASHGATE_PYTEST_NO_COP_KEY"
"""


@pytest.fixture(scope="session")
def bashgate_bin() -> str:
    """The bashgate binary under test: $BASHGATE_BIN, else target/debug/bashgate."""
    path = os.environ.get("BASHGATE_BIN") or str(REPO / "target" / "debug" / "bashgate")
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"bashgate binary not found at {path}: run `cargo build -p bashgate` in the "
            f"repository, or set BASHGATE_BIN (bash .ci/python.sh does both)"
        )
    return path


class Workspace:
    """A temporary project directory with its own bashgate config and state."""

    def __init__(self, root: Path, bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.dir = root / "project"
        self.dir.mkdir()
        self.bin = bin
        self.config = root / "bashgate.toml"
        self.write_config("")
        monkeypatch.setenv("BASHGATE_CONFIG", str(self.config))
        monkeypatch.setenv("BASHGATE_STATE_DIR", str(root / "state"))
        monkeypatch.delenv("BASHGATE_BIN", raising=False)
        # The person's own project: one they have not trusted counts as
        # untrusted content (every session starts corruption-tainted).
        subprocess.run([bin, "trust", str(self.dir)], check=True, capture_output=True)

    def write_config(self, extra: str) -> None:
        self.config.write_text(BASE_CONFIG + extra)

    def gate(self, **kwargs) -> Gate:
        kwargs.setdefault("bin", self.bin)
        kwargs.setdefault("cwd", str(self.dir))
        kwargs.setdefault("timeout", 60)
        return Gate(**kwargs)

    def path(self, name: str) -> Path:
        return self.dir / name

    def fake_bashgate(self, name: str, script: str) -> str:
        """An executable shell script standing in for a broken bashgate."""
        path = self.root / name
        path.write_text("#!/bin/sh\n" + script)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)


@pytest.fixture
def ws(tmp_path: Path, bashgate_bin: str, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return Workspace(tmp_path, bashgate_bin, monkeypatch)


def ctx() -> RunContextWrapper:
    return RunContextWrapper(context=None)


def shell_request(*commands: str, timeout_ms: int | None = None) -> ShellCommandRequest:
    """What the SDK hands a ShellTool executor for a model's shell_call."""
    return ShellCommandRequest(
        ctx_wrapper=ctx(),
        data=ShellCallData(
            call_id="call_shell_1",
            action=ShellActionRequest(commands=list(commands), timeout_ms=timeout_ms),
        ),
    )


def local_shell_request(
    argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None
) -> LocalShellCommandRequest:
    """What the SDK hands a LocalShellTool executor for a model's local_shell_call."""
    return LocalShellCommandRequest(
        ctx_wrapper=ctx(),
        data=LocalShellCall(
            id="lsc_1",
            call_id="call_local_1",
            status="in_progress",
            type="local_shell_call",
            action=LocalShellCallAction(command=argv, env=env or {}, type="exec", working_directory=cwd),
        ),
    )
