"""LocalShellTool, the SDK's older argv-based shell tool, with the real bashgate in front."""

from __future__ import annotations

import asyncio

import pytest
from agents import LocalShellTool
from conftest import local_shell_request

from bashgate_agents import gated_local_shell_executor, local_shell_command_line


def run(tool: LocalShellTool, request):
    return asyncio.run(tool.executor(request))


def test_denied_command_does_not_run(ws):
    tool = LocalShellTool(executor=gated_local_shell_executor(gate=ws.gate()))
    argv = ["bash", "-lc", "touch denied.marker; cat < /dev/tcp/127.0.0.1/9"]
    out = run(tool, local_shell_request(argv, cwd=str(ws.dir)))
    assert not ws.path("denied.marker").exists()
    assert out.startswith("bashgate denied this command, so it was not run.")
    assert "command: bash -lc 'touch denied.marker; cat < /dev/tcp/127.0.0.1/9'" in out
    assert "BG417" in out


def test_allowed_command_runs_in_its_working_directory(ws):
    sub = ws.dir / "sub"
    sub.mkdir()
    tool = LocalShellTool(executor=gated_local_shell_executor(gate=ws.gate()))
    argv = ["bash", "-c", 'touch allowed.marker && echo "hello $GREETING"']
    out = run(tool, local_shell_request(argv, cwd=str(sub), env={"GREETING": "world"}))
    assert (sub / "allowed.marker").exists()
    assert out == "hello world"


def test_failed_command_reports_its_exit_code(ws):
    tool = LocalShellTool(executor=gated_local_shell_executor(gate=ws.gate()))
    out = run(tool, local_shell_request(["ls", "no-such-file"], cwd=str(ws.dir)))
    assert "exit code: 2" in out and "stderr:" in out


def test_command_line_shows_what_the_call_does():
    assert local_shell_command_line(["bash", "-lc", "ls | wc -l"]) == "bash -lc 'ls | wc -l'"
    assert (
        local_shell_command_line(["make"], {"LD_PRELOAD": "/tmp/x y.so"}) == "LD_PRELOAD='/tmp/x y.so' make"
    )
    assert local_shell_command_line(["id"], user="root") == "sudo -u root -- id"
    with pytest.raises(ValueError):
        local_shell_command_line([])
    with pytest.raises(ValueError):
        local_shell_command_line(["ls"], {"A;B": "1"})


def test_uncheckable_call_is_refused_without_asking(ws):
    tool = LocalShellTool(executor=gated_local_shell_executor(gate=ws.gate()))
    out = run(tool, local_shell_request(["touch", "x.marker"], cwd=str(ws.dir), env={"$(id)": "1"}))
    assert out.startswith("bashgate denied")
    assert not ws.path("x.marker").exists()
