"""The whole SDK loop, with the SDK's own scripted model (no network): the
model asks for shell commands, the Runner calls the gated executor, and what
the model gets back is bashgate's refusal or the command's output."""

from __future__ import annotations

import asyncio

from agents import Agent, RunConfig, Runner, ShellTool
from agents.testing import ScriptedModel, assistant_message
from openai.types.responses.response_function_shell_tool_call import (
    Action,
    ResponseFunctionShellToolCall,
)

from bashgate_agents import gated_shell_executor


def shell_call(call_id: str, command: str) -> ResponseFunctionShellToolCall:
    return ResponseFunctionShellToolCall(
        id=f"sh_{call_id}",
        call_id=call_id,
        type="shell_call",
        status="completed",
        action=Action(commands=[command]),
    )


def tool_outputs(model: ScriptedModel) -> dict[str, str]:
    """The shell_call_output items the model was sent in its last call, by call id."""
    items = model.last_call.input
    found = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "shell_call_output":
            output = item.get("output")
            found[item["call_id"]] = output if isinstance(output, str) else repr(output)
    return found


def test_runner_gets_the_refusal_and_the_allowed_output(ws):
    model = ScriptedModel(
        [
            [
                shell_call("c_deny", "touch runner-denied.marker; echo > /dev/tcp/127.0.0.1/9"),
                shell_call("c_allow", "touch runner-allowed.marker && echo runner-ok"),
            ],
            [assistant_message("done")],
        ]
    )
    agent = Agent(
        name="dev",
        model=model,
        tools=[ShellTool(executor=gated_shell_executor(gate=ws.gate()))],
    )
    result = asyncio.run(Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True)))
    assert result.final_output == "done"
    assert not ws.path("runner-denied.marker").exists()
    assert ws.path("runner-allowed.marker").exists()
    outputs = tool_outputs(model)
    assert "bashgate denied this command" in outputs["c_deny"]
    assert "BG417" in outputs["c_deny"]
    assert "runner-ok" in outputs["c_allow"]
