"""bashgate's "allow-confined": the command runs, fenced by the kernel.

In a session that has read secrets (contains_secrets), a command bashgate
cannot prove local runs as `bashgate run -- COMMAND`: no network, protected
files read-only. Each test first shows what the same script does unfenced in
an untainted session, so a fence that did nothing would fail it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess

import pytest
from agents import LocalShellTool, ShellResult, ShellTool
from conftest import local_shell_request, shell_request

from bashgate_agents import Gate, gated_local_shell_executor, gated_shell_executor

TAINTED = "contains_secrets = true\n"

# A build script bashgate cannot see into: it leaves a marker, opens a TCP
# connection to the test's listener and appends to the project's Claude
# settings (a protected file).
SCRIPT = """#!/bin/bash
touch ran.marker
exec 3<>/dev/tcp/127.0.0.1/$1 && echo connected || echo no-network
echo '{"hooks": {}}' >> .claude/settings.json && echo wrote || echo read-only
"""


@pytest.fixture
def fence(ws):
    # Only doctor's fence answer says whether this machine can confine (its
    # exit status also covers the agent clients); CI machines can.
    report = json.loads(subprocess.run([ws.bin, "doctor", "--json"], capture_output=True, text=True).stdout)
    if not report["fence"]["can_confine"]:
        assert not os.environ.get("CI"), "under CI a machine that cannot confine is a failure, not a skip"
        pytest.skip("this machine cannot run the fence (`bashgate doctor` says why)")
    subprocess.run(["git", "init", "-q", str(ws.dir)], check=True)
    (ws.dir / ".claude").mkdir()
    (ws.dir / ".claude" / "settings.json").write_text("{}\n")
    script = ws.path("build.sh")
    script.write_text(SCRIPT)
    script.chmod(0o755)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    yield listener
    listener.close()


def connections(listener: socket.socket) -> int:
    seen = 0
    while True:
        try:
            conn, _ = listener.accept()
        except (TimeoutError, socket.timeout):
            return seen
        conn.close()
        seen += 1


def run(tool, request):
    return asyncio.run(tool.executor(request))


def test_untainted_the_script_reaches_the_network_and_writes_settings(ws, fence):
    port = fence.getsockname()[1]
    out = run(ShellTool(executor=gated_shell_executor(gate=ws.gate())), shell_request(f"./build.sh {port}"))
    [entry] = out.output
    assert entry.stdout.split() == ["connected", "wrote"]
    assert connections(fence) == 1
    assert "hooks" in ws.path(".claude/settings.json").read_text()


def test_gate_answers_allow_confined_with_the_fenced_command(ws, fence):
    ws.write_config(TAINTED)
    decision = ws.gate().check("./build.sh 1")
    assert decision.decision == "allow-confined" and decision.allowed and decision.confined
    assert " run --profile " in decision.command and " -c './build.sh 1'; " in decision.command
    assert "fenced" in decision.reason


def test_shell_tool_runs_it_fenced(ws, fence):
    ws.write_config(TAINTED)
    port = fence.getsockname()[1]
    out = run(ShellTool(executor=gated_shell_executor(gate=ws.gate())), shell_request(f"./build.sh {port}"))
    assert isinstance(out, ShellResult)
    [entry] = out.output
    assert ws.path("ran.marker").exists(), entry.stderr
    assert entry.stdout.split() == ["no-network", "read-only"]
    assert entry.exit_code == 0
    assert connections(fence) == 0
    assert ws.path(".claude/settings.json").read_text() == "{}\n"


def test_an_application_executor_is_handed_the_fenced_command(ws, fence):
    ws.write_config(TAINTED)
    seen = []

    def executor(request):
        seen.append(list(request.data.action.commands))
        return "ran"

    tool = ShellTool(executor=gated_shell_executor(executor, gate=ws.gate()))
    assert run(tool, shell_request("./build.sh 1", "ls")) == "ran"
    [[first, second]] = seen
    assert " run --profile " in first and " -c './build.sh 1'; " in first
    assert " run --profile " in second and " -c 'ls'; " in second


def test_local_shell_tool_runs_it_fenced_with_its_environment(ws, fence):
    ws.write_config(TAINTED)
    port = fence.getsockname()[1]
    tool = LocalShellTool(executor=gated_local_shell_executor(gate=ws.gate()))
    argv = ["bash", "-c", f'./build.sh {port}; echo "mode=$MODE"']
    out = run(tool, local_shell_request(argv, cwd=str(ws.dir), env={"MODE": "fenced"}))
    stdout, _, stderr = out.partition("stderr:\n")
    assert stdout.split() == ["no-network", "read-only", "mode=fenced"], out
    assert "Read-only file system" in stderr
    assert ws.path("ran.marker").exists()
    assert connections(fence) == 0
    assert ws.path(".claude/settings.json").read_text() == "{}\n"


def test_allow_confined_without_a_command_runs_nothing(ws):
    fake = ws.fake_bashgate(
        "confined-no-command",
        'cat >/dev/null; echo \'{"decision": "allow-confined", "reason": "fenced"}\'\n',
    )
    gate = Gate(bin=fake, cwd=str(ws.dir), timeout=10)
    decision = gate.check("touch x.marker")
    assert decision.decision == "error" and not decision.allowed
    out = run(ShellTool(executor=gated_shell_executor(gate=gate)), shell_request("touch x.marker"))
    assert out.startswith("bashgate could not check this command")
    assert not ws.path("x.marker").exists()
