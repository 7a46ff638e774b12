"""ShellTool, the SDK's current shell tool, with the real bashgate in front."""

from __future__ import annotations

import asyncio

from agents import ShellResult, ShellTool
from conftest import shell_request

from bashgate_agents import gated_shell_executor

# bashgate denies a /dev/tcp redirect under any configuration (BG106 → BG417);
# the `touch` before it would run if the command were run at all.
DENIED = "touch denied.marker; echo hi > /dev/tcp/127.0.0.1/9"
ALLOWED = "touch allowed.marker && echo hello-from-shell"


def run(tool: ShellTool, request):
    """Calls the tool's executor as the SDK does (it awaits what it returns)."""
    return asyncio.run(tool.executor(request))


def test_denied_command_does_not_run_and_the_reason_is_the_output(ws):
    tool = ShellTool(executor=gated_shell_executor(gate=ws.gate()))
    out = run(tool, shell_request(DENIED))
    assert not ws.path("denied.marker").exists()
    assert isinstance(out, str)
    assert out.startswith("bashgate denied this command, so it was not run.")
    assert f"command: {DENIED}" in out
    assert "BG417" in out and "/dev/tcp" in out


def test_allowed_command_runs_and_its_output_is_returned(ws):
    tool = ShellTool(executor=gated_shell_executor(gate=ws.gate()))
    out = run(tool, shell_request(ALLOWED))
    assert ws.path("allowed.marker").exists()
    assert isinstance(out, ShellResult)
    [entry] = out.output
    assert entry.stdout == "hello-from-shell\n"
    assert entry.exit_code == 0
    assert entry.command == ALLOWED


def test_one_denied_command_stops_the_whole_call(ws):
    tool = ShellTool(executor=gated_shell_executor(gate=ws.gate()))
    out = run(tool, shell_request(ALLOWED, DENIED))
    assert not ws.path("allowed.marker").exists()
    assert not ws.path("denied.marker").exists()
    assert "None of the 2 commands of this call was run." in out


def test_wraps_an_application_executor_and_calls_it_only_when_allowed(ws):
    seen = []

    def executor(request):  # a synchronous executor of the application's own
        seen.append(list(request.data.action.commands))
        return "ran"

    tool = ShellTool(executor=gated_shell_executor(executor, gate=ws.gate()))
    assert run(tool, shell_request("ls -la")) == "ran"
    assert run(tool, shell_request(DENIED)).startswith("bashgate denied")
    assert seen == [["ls -la"]]


def test_extra_arguments_reach_bashgate(ws):
    # --config on the command line: a denylist that bans curl. The environment's
    # BASHGATE_CONFIG (no denylist) would allow it in an untainted session.
    strict = ws.root / "strict.toml"
    strict.write_text('[denylist]\nenabled = true\n[cop]\napi_key_env = "BASHGATE_PYTEST_NO_COP_KEY"\n')
    command = "touch curl.marker; curl -s --max-time 2 http://127.0.0.1:9/x"

    tool = ShellTool(executor=gated_shell_executor(gate=ws.gate(args=["--config", str(strict)])))
    out = run(tool, shell_request(command))
    assert not ws.path("curl.marker").exists()
    assert out.startswith("bashgate denied") and "curl" in out

    # Without it the same command is allowed and runs (curl itself fails to connect).
    out = run(ShellTool(executor=gated_shell_executor(gate=ws.gate())), shell_request(command))
    assert ws.path("curl.marker").exists()
    assert isinstance(out, ShellResult)


def test_timeout_of_the_call_bounds_the_command(ws):
    tool = ShellTool(executor=gated_shell_executor(gate=ws.gate()))
    out = run(tool, shell_request("sleep 20", timeout_ms=300))
    [entry] = out.output
    assert entry.status == "timeout"
