"""bashgate for the OpenAI Agents SDK: every shell command is checked by
`bashgate hook json` before it runs; a denial is returned as the tool's output.

    from agents import Agent, ShellTool
    from bashgate_agents import Gate, gated_shell_executor

    gate = Gate()  # bashgate from $BASHGATE_BIN or PATH
    agent = Agent(name="dev", tools=[ShellTool(executor=gated_shell_executor(gate=gate))])

See docs/openai-agents.md in the bashgate repository.
"""

from .gate import BIN_ENV, DEFAULT_TIMEOUT, ApprovalCallback, ApprovalRequest, Decision, Gate, refusal
from .shell import (
    LocalShellRunner,
    ShellRunner,
    gated_local_shell_executor,
    gated_shell_executor,
    local_shell_command_line,
)

__all__ = [
    "BIN_ENV",
    "DEFAULT_TIMEOUT",
    "ApprovalCallback",
    "ApprovalRequest",
    "Decision",
    "Gate",
    "LocalShellRunner",
    "ShellRunner",
    "gated_local_shell_executor",
    "gated_shell_executor",
    "local_shell_command_line",
    "refusal",
]
