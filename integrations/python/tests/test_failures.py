"""When bashgate cannot be asked, the command does not run (fail closed), and
the message says what to do."""

from __future__ import annotations

import asyncio
import json
import time

from agents import LocalShellTool, ShellTool
from conftest import local_shell_request, shell_request

from bashgate_agents import Gate, gated_local_shell_executor, gated_shell_executor

COMMAND = "touch ran.marker && echo ran"


def run_shell(gate: Gate):
    tool = ShellTool(executor=gated_shell_executor(gate=gate))
    return asyncio.run(tool.executor(shell_request(COMMAND)))


def test_missing_binary_on_path_fails_closed(ws, monkeypatch):
    monkeypatch.setenv("BASHGATE_BIN", "bashgate-not-installed-anywhere")
    out = run_shell(Gate(cwd=str(ws.dir)))  # the binary named by BASHGATE_BIN
    assert not ws.path("ran.marker").exists()
    assert out.startswith("bashgate could not check this command, so it was not run")
    assert "`bashgate-not-installed-anywhere` was not found on PATH" in out
    assert "BASHGATE_BIN" in out


def test_missing_binary_path_fails_closed_for_local_shell(ws):
    gate = Gate(bin=str(ws.root / "no" / "bashgate"), cwd=str(ws.dir))
    tool = LocalShellTool(executor=gated_local_shell_executor(gate=gate))
    out = asyncio.run(tool.executor(local_shell_request(["touch", "ran.marker"], cwd=str(ws.dir))))
    assert not ws.path("ran.marker").exists()
    assert "could not start" in out and "BASHGATE_BIN" in out


def test_answer_that_is_not_a_decision_fails_closed(ws):
    for name, script in [
        ("prints-text", "cat >/dev/null; echo 'all good'\n"),
        ("prints-other-decision", 'cat >/dev/null; echo \'{"decision": "maybe", "reason": "x"}\'\n'),
        ("prints-nothing", "cat >/dev/null\n"),
    ]:
        out = run_shell(ws.gate(bin=ws.fake_bashgate(name, script)))
        assert "which is not a decision" in out, name
        assert "hook json" in out
    assert not ws.path("ran.marker").exists()


def test_nonzero_exit_fails_closed_even_with_an_allow(ws):
    script = 'echo \'{"decision": "allow", "reason": "x"}\'; echo "config broken" >&2; exit 3\n'
    out = run_shell(ws.gate(bin=ws.fake_bashgate("exits-3", script)))
    assert not ws.path("ran.marker").exists()
    assert "exited with status 3: config broken" in out


def test_timeout_fails_closed_and_stops_bashgate(ws):
    # The child `sleep` keeps the pipes open; the whole process group is stopped.
    slow = ws.fake_bashgate("hangs", "sleep 30\n")
    start = time.monotonic()
    out = run_shell(ws.gate(bin=slow, timeout=0.5))
    assert time.monotonic() - start < 10
    assert not ws.path("ran.marker").exists()
    assert "gave no answer within 0.5 s" in out and "timeout" in out


def test_request_and_arguments_follow_the_hook_json_interface(ws):
    record = ws.fake_bashgate(
        "records",
        f'printf "%s\\n" "$@" > {ws.root}/argv; cat > {ws.root}/request.json\n'
        'echo \'{"decision": "allow", "reason": "fine"}\'\n',
    )
    gate = ws.gate(bin=record, args=["--remote", "http://127.0.0.1:7777"], session_id="run-42")
    out = run_shell(gate)
    assert ws.path("ran.marker").exists() and out.output[0].stdout == "ran\n"
    assert (ws.root / "argv").read_text().split() == ["hook", "json", "--remote", "http://127.0.0.1:7777"]
    assert json.loads((ws.root / "request.json").read_text()) == {
        "tool_name": "Bash",
        "tool_input": {"command": COMMAND},
        "session_id": "run-42",
        "cwd": str(ws.dir),
    }


def test_default_session_ids_differ_per_gate():
    assert Gate().session_id != Gate().session_id
