"""The container setup: the gated executor asks the host daemon (`bashgate
serve` on loopback) with `--remote`, and a person answers from the host with
`bashgate approve` / `bashgate deny` while the executor waits."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from agents import ShellResult, ShellTool
from conftest import shell_request

from bashgate_agents import gated_shell_executor

NETWORK = "touch remote.marker; curl -s --max-time 2 http://127.0.0.1:9/x"


class Daemon:
    def __init__(self, bin: str, sock_dir: Path, log: Path) -> None:
        self.bin = bin
        self.admin = str(sock_dir / "admin.sock")
        self.log = log
        self.proc = subprocess.Popen(
            [bin, "serve", "--listen", "127.0.0.1:0", "--admin-socket", self.admin],
            stdin=subprocess.DEVNULL,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(r"container API on (http://127\.0\.0\.1:\d+)", self.log.read_text())
            if found and Path(self.admin).exists():
                return found.group(1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"bashgate serve did not start:\n{self.log.read_text()}")

    def admin_cmd(self, *args: str) -> str:
        done = subprocess.run(
            [self.bin, *args, "--admin-socket", self.admin],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def pending_id(self, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            approvals = json.loads(self.admin_cmd("pending", "--json"))["approvals"]
            if approvals:
                [approval] = approvals
                assert approval["command"] == NETWORK
                return approval["id"]
            time.sleep(0.1)
        pytest.fail("no approval became pending")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def daemon(ws):
    # A short directory for the unix socket (paths are limited to ~100 bytes).
    sock_dir = Path(tempfile.mkdtemp(prefix="bg-"))
    d = Daemon(ws.bin, sock_dir, ws.root / "serve.log")
    try:
        yield d
    finally:
        d.stop()
        shutil.rmtree(sock_dir, ignore_errors=True)


def tainted_session(daemon: Daemon) -> str:
    token = json.loads(daemon.admin_cmd("session", "create", "--json", "agent-1"))["token"]
    daemon.admin_cmd("session", "taint", "--corruption", "--secret", "agent-1")
    return token


def run_in_background(tool: ShellTool):
    """Runs the executor on its own thread, as the agent would, while the test plays the person."""
    result = {}

    def target():
        result["out"] = asyncio.run(tool.executor(shell_request(NETWORK)))

    thread = threading.Thread(target=target)
    thread.start()
    return thread, result


def remote_tool(ws, daemon: Daemon, token: str) -> ShellTool:
    gate = ws.gate(args=["--remote", daemon.url], env={"BASHGATE_TOKEN": token})
    return ShellTool(executor=gated_shell_executor(gate=gate))


def test_network_command_waits_for_the_person_and_runs_when_approved(ws, daemon):
    token = tainted_session(daemon)
    thread, result = run_in_background(remote_tool(ws, daemon, token))
    approval = daemon.pending_id()
    assert not ws.path("remote.marker").exists()  # still waiting
    daemon.admin_cmd("approve", approval)
    thread.join(60)
    assert not thread.is_alive()
    assert isinstance(result["out"], ShellResult)
    assert ws.path("remote.marker").exists()


def test_network_command_denied_by_the_person_does_not_run(ws, daemon):
    token = tainted_session(daemon)
    thread, result = run_in_background(remote_tool(ws, daemon, token))
    daemon.admin_cmd("deny", daemon.pending_id())
    thread.join(60)
    assert not thread.is_alive()
    assert result["out"].startswith("bashgate denied this command, so it was not run.")
    assert not ws.path("remote.marker").exists()


def test_wrong_token_is_not_run(ws, daemon):
    tainted_session(daemon)
    tool = remote_tool(ws, daemon, "bgt_" + "0" * 64)
    out = asyncio.run(tool.executor(shell_request(NETWORK)))
    # The daemon refuses the token; the hook's on_error ("deny" here) answers.
    assert out.startswith("bashgate denied this command"), out
    assert "401" in out and "BG416" in out
    assert not ws.path("remote.marker").exists()
