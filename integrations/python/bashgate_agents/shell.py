"""Executors for the Agents SDK's shell tools, with bashgate in front.

The SDK has two local shell tools, and leaves running the commands to an
executor the application supplies:

- `ShellTool` (the current one): the model sends a list of command strings;
  the executor gets a `ShellCommandRequest` and returns text or a
  `ShellResult`.
- `LocalShellTool` (the older one): the model sends an argv list plus
  environment, working directory and user; the executor gets a
  `LocalShellCommandRequest` and returns text.

`gated_shell_executor` and `gated_local_shell_executor` wrap an executor (yours,
or the plain ones below) so that each command is first put to bashgate. An
"allow" runs it; an "allow-confined" runs it fenced (the executor is handed
the request with the command replaced by bashgate's `bashgate run -c ...`
line); anything else returns a message saying why it did not run, as the
tool's output, and the executor is never called.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import shlex
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from agents import (
    LocalShellCommandRequest,
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
)

from .gate import Decision, Gate, refusal

ShellExecutor = Callable[[ShellCommandRequest], Any | Awaitable[Any]]
LocalShellExecutor = Callable[[LocalShellCommandRequest], str | Awaitable[str]]

DEFAULT_COMMAND_TIMEOUT = 120.0
"""Seconds a command may run in the plain executors when the model sets no timeout."""


def gated_shell_executor(
    executor: ShellExecutor | None = None, *, gate: Gate | None = None
) -> Callable[[ShellCommandRequest], Awaitable[Any]]:
    """An executor for `ShellTool(executor=...)` that asks bashgate first.

    Every command of the call is checked before any of them runs; if one is
    not allowed, none runs (they are usually steps of one plan). `executor`
    defaults to `ShellRunner(cwd=gate.cwd)`; `gate` to `Gate()`.
    """
    gate = gate or Gate()
    inner = executor or ShellRunner(cwd=gate.cwd)

    async def run(request: ShellCommandRequest) -> Any:
        commands = list(request.data.action.commands)
        to_run = []
        for command in commands:
            decision = await gate.decide(command)
            if not decision.allowed:
                text = refusal(command, decision)
                if len(commands) > 1:
                    text += f"\nNone of the {len(commands)} commands of this call was run."
                return text
            to_run.append(decision.to_run(command))
        if to_run != commands:
            action = dataclasses.replace(request.data.action, commands=to_run)
            data = dataclasses.replace(request.data, action=action)
            request = dataclasses.replace(request, data=data)
        return await _call(inner, request)

    return run


def gated_local_shell_executor(
    executor: LocalShellExecutor | None = None, *, gate: Gate | None = None
) -> Callable[[LocalShellCommandRequest], Awaitable[str]]:
    """An executor for `LocalShellTool(executor=...)` that asks bashgate first.

    bashgate is shown the call as one bash command line (`local_shell_command_line`),
    in the call's working directory. `executor` defaults to
    `LocalShellRunner(cwd=gate.cwd)`; `gate` to `Gate()`.
    """
    gate = gate or Gate()
    inner = executor or LocalShellRunner(cwd=gate.cwd)

    async def run(request: LocalShellCommandRequest) -> str:
        action = request.data.action
        try:
            command = local_shell_command_line(action.command, action.env, action.user)
        except ValueError as e:
            return refusal(_show_argv(action.command), Decision("deny", str(e)))
        decision = await gate.decide(command, cwd=action.working_directory or None)
        if not decision.allowed:
            return refusal(command, decision)
        if decision.confined:
            # The fenced line carries the environment and the user itself;
            # set on the process, they would reach `bashgate run` too.
            fenced = action.model_copy(
                update={"command": ["bash", "-c", decision.to_run(command)], "env": {}, "user": None}
            )
            data = request.data.model_copy(update={"action": fenced})
            request = dataclasses.replace(request, data=data)
        return await _call(inner, request)

    return run


def local_shell_command_line(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    user: str | None = None,
) -> str:
    """The bash command line that does what a LocalShellTool call does.

    `["bash", "-lc", "ls | wc -l"]` with env {"A": "1"} becomes
    `A=1 bash -lc 'ls | wc -l'`, so bashgate parses the inner script too and
    sees the environment (LD_PRELOAD=, BASH_ENV=...). A call that runs as
    another user is shown as `sudo -u USER -- ...`, which is what it does.
    Raises ValueError for a call that cannot be written as one (an empty argv,
    an environment name that is not a shell name).
    """
    if not argv:
        raise ValueError("the local_shell call has an empty command")
    words = [shlex.quote(str(a)) for a in argv]
    if user:
        words = ["sudo", "-u", shlex.quote(user), "--", *words]
    assignments = []
    for name, value in (env or {}).items():
        if not name.isidentifier() or not name.isascii():
            raise ValueError(
                f"the local_shell call sets the environment variable {name!r}, which is not a valid name"
            )
        assignments.append(f"{name}={shlex.quote(str(value))}")
    return " ".join([*assignments, *words])


class ShellRunner:
    """A plain `ShellTool` executor: runs each command with `bash -c` in `cwd`.

    Commands run one after another, each in its own process group, each bounded
    by the call's timeout_ms (else `timeout` seconds); the output is a
    `ShellResult` with stdout, stderr and the exit status of each.
    """

    def __init__(
        self,
        *,
        cwd: str | None = None,
        shell: str = "bash",
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cwd = cwd
        self.shell = shell
        self.timeout = timeout
        self.env = dict(env) if env else None

    async def __call__(self, request: ShellCommandRequest) -> ShellResult:
        action = request.data.action
        timeout = action.timeout_ms / 1000 if action.timeout_ms else self.timeout
        env = {**os.environ, **self.env} if self.env else None
        outputs = []
        for command in action.commands:
            code, stdout, stderr, timed_out = await _run([self.shell, "-c", command], self.cwd, env, timeout)
            outcome = (
                ShellCallOutcome(type="timeout")
                if timed_out
                else ShellCallOutcome(type="exit", exit_code=code)
            )
            outputs.append(ShellCommandOutput(stdout=stdout, stderr=stderr, outcome=outcome, command=command))
        return ShellResult(output=outputs, max_output_length=action.max_output_length)


class LocalShellRunner:
    """A plain `LocalShellTool` executor: runs the call's argv with its env and
    working directory (default `cwd`), bounded by its timeout_ms (else `timeout`
    seconds), and returns stdout, stderr and the exit status as text. A call
    that asks to run as another user is refused."""

    def __init__(self, *, cwd: str | None = None, timeout: float = DEFAULT_COMMAND_TIMEOUT) -> None:
        self.cwd = cwd
        self.timeout = timeout

    async def __call__(self, request: LocalShellCommandRequest) -> str:
        action = request.data.action
        if action.user:
            return (
                f"This executor cannot run commands as another user ({action.user}); the command was not run."
            )
        timeout = action.timeout_ms / 1000 if action.timeout_ms else self.timeout
        env = {**os.environ, **action.env} if action.env else None
        cwd = action.working_directory or self.cwd
        try:
            code, stdout, stderr, timed_out = await _run(list(action.command), cwd, env, timeout)
        except OSError as e:
            return f"could not run {_show_argv(action.command)}: {e}"
        parts = [stdout.rstrip("\n")] if stdout else []
        if stderr:
            parts.append("stderr:\n" + stderr.rstrip("\n"))
        if timed_out:
            parts.append(f"timed out after {timeout:g} s")
        elif code != 0:
            parts.append(f"exit code: {code}")
        return "\n".join(parts)


async def _run(argv: Sequence[str], cwd: str | None, env: Mapping[str, str] | None, timeout: float):
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = await proc.communicate()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), timed_out


async def _call(executor: Callable[[Any], Any], request: Any) -> Any:
    result = executor(request)
    if inspect.isawaitable(result):
        result = await result
    return result


def _show_argv(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv) if argv else "(empty)"
