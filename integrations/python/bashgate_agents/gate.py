"""Asks `bashgate hook json` whether one shell command may run.

Every way this can go wrong (no binary, a crash, a timeout, an answer that is
not a decision) ends in a decision of kind "error", which never lets the
command run: the gate fails closed.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

log = logging.getLogger("bashgate_agents")

BIN_ENV = "BASHGATE_BIN"
"""Environment variable naming the bashgate executable (default: `bashgate` on PATH)."""

DEFAULT_TIMEOUT = 360.0
"""Seconds to wait for bashgate's answer. A local check answers in
milliseconds; with `--remote`, the hook may wait for a person's approval
(up to `remote.approval_wait_s`, 330 s by default), so the default is longer
than that."""

_DECISIONS = ("allow", "allow-confined", "deny", "ask")
_STDERR_TAIL = 600


@dataclass(frozen=True)
class Decision:
    """bashgate's answer about one command.

    `decision` is "allow", "allow-confined", "deny" or "ask" as bashgate
    said; "error" when bashgate could not be asked (then `reason` says what
    to do about it); "declined" when an approval callback turned an "ask"
    down.

    "allow-confined" lets the command run only fenced (no network, protected
    files read-only): `command` is then the command line to run instead of
    the original, `bashgate run -c ORIGINAL`. Never run the original.
    """

    decision: str
    reason: str
    command: str | None = None

    @property
    def allowed(self) -> bool:
        return self.decision in ("allow", "allow-confined")

    @property
    def confined(self) -> bool:
        return self.decision == "allow-confined"

    def to_run(self, original: str) -> str:
        """The command line that may run: the fenced one when confined."""
        if self.confined:
            if not self.command:
                raise ValueError("an allow-confined decision without the command to run")
            return self.command
        return original


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approval callback is shown when bashgate answers "ask"."""

    command: str
    reason: str
    cwd: str
    session_id: str


ApprovalCallback = Callable[[ApprovalRequest], bool | Awaitable[bool]]
"""Decides an "ask": return (or resolve to) True to run the command. Anything
else, or an exception, means it does not run."""


class Gate:
    """One agent session's connection to bashgate.

    bin:        the bashgate executable; default $BASHGATE_BIN, else `bashgate` on PATH.
    args:       extra arguments after `bashgate hook json`, e.g. ["--remote", URL]
                or ["--config", PATH].
    session_id: the session bashgate keeps taint for; default a new random id
                per Gate, so use one Gate per agent session.
    cwd:        the directory commands run in, told to bashgate (it resolves
                paths and finds `.bashgate.toml` there); default the process's
                working directory at the time of each check.
    timeout:    seconds to wait for bashgate before failing closed.
    on_ask:     approval callback for "ask" answers. Without one, "ask" means
                the command does not run.
    env:        extra environment variables for the bashgate process (for
                example its daemon token); the rest is inherited.
    """

    def __init__(
        self,
        *,
        bin: str | None = None,
        args: Sequence[str] = (),
        session_id: str | None = None,
        cwd: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        on_ask: ApprovalCallback | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.bin = bin or os.environ.get(BIN_ENV) or "bashgate"
        self.args = [str(a) for a in args]
        self.session_id = session_id or f"openai-agents-{uuid.uuid4().hex[:16]}"
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.timeout = timeout
        self.on_ask = on_ask
        self.env = dict(env) if env else None

    def working_directory(self, cwd: str | None = None) -> str:
        """The directory a command runs in: `cwd`, else the gate's, else the process's."""
        return os.fspath(cwd or self.cwd or os.getcwd())

    def check(self, command: str, *, cwd: str | None = None) -> Decision:
        """Asks bashgate about `command` (blocking). Never raises for bashgate's failures."""
        cwd = self.working_directory(cwd)
        request = {
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "session_id": self.session_id,
            "cwd": cwd,
        }
        exe = self._executable()
        if exe is None:
            return self._error(
                f"the bashgate executable `{self.bin}` was not found on PATH. Install bashgate "
                f"(cargo install --path gate/cli in the bashgate repository) or set {BIN_ENV} "
                f"(or Gate(bin=...)) to its path."
            )
        argv = [exe, "hook", "json", *self.args]
        env = {**os.environ, **self.env} if self.env else None
        try:
            # Its own process group, so a timeout stops it and anything it started.
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            return self._error(
                f"could not start `{exe}`: {e}. Set {BIN_ENV} (or Gate(bin=...)) to a working "
                f"bashgate executable."
            )
        try:
            out, err = proc.communicate(json.dumps(request).encode(), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return self._error(
                f"`{_show(argv)}` gave no answer within {self.timeout:g} s and was stopped. "
                f"Check that bashgate (and its daemon, with --remote) is running and reachable, "
                f"or give Gate(timeout=...) more time."
            )
        except BaseException:
            _kill_group(proc)
            proc.communicate()
            raise
        stdout = out.decode("utf-8", "replace")
        stderr = err.decode("utf-8", "replace").strip()
        if proc.returncode != 0:
            return self._error(
                f"`{_show(argv)}` exited with status {proc.returncode}"
                + (f": {stderr[-_STDERR_TAIL:]}" if stderr else "")
                + ". Check the installation and the configuration (`bashgate config`); "
                "this bashgate may be too old to have `hook json`."
            )
        return self._parse(stdout, argv)

    async def acheck(self, command: str, *, cwd: str | None = None) -> Decision:
        """`check` without blocking the event loop."""
        return await asyncio.to_thread(self.check, command, cwd=cwd)

    async def decide(self, command: str, *, cwd: str | None = None) -> Decision:
        """Asks bashgate, then settles an "ask" with the approval callback.

        The result is "allow" only if bashgate allowed the command or the
        callback approved it; otherwise it is what stops the command.
        """
        decision = await self.acheck(command, cwd=cwd)
        if decision.decision != "ask" or self.on_ask is None:
            return decision
        request = ApprovalRequest(
            command=command,
            reason=decision.reason,
            cwd=self.working_directory(cwd),
            session_id=self.session_id,
        )
        try:
            answer = self.on_ask(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as e:  # noqa: BLE001 -- a failing callback must not let the command through
            log.warning("bashgate approval callback failed: %r", e)
            return Decision("declined", f"{decision.reason} (the approval callback failed: {e!r})")
        if answer is True:
            return Decision("allow", f"approved by the approval callback; bashgate said: {decision.reason}")
        return Decision("declined", decision.reason)

    def _executable(self) -> str | None:
        if os.sep in self.bin or (os.altsep and os.altsep in self.bin):
            return self.bin  # a path: let the OS say what is wrong with it
        return shutil.which(self.bin)

    def _parse(self, stdout: str, argv: Sequence[str]) -> Decision:
        shown = stdout.strip()
        if len(shown) > 300:
            shown = shown[:300] + "..."
        try:
            answer = json.loads(stdout)
        except ValueError:
            answer = None
        decision = answer.get("decision") if isinstance(answer, dict) else None
        reason = answer.get("reason", "") if isinstance(answer, dict) else None
        command = answer.get("command") if isinstance(answer, dict) else None
        if decision not in _DECISIONS or not isinstance(reason, str):
            return self._error(
                f"`{_show(argv)}` answered {shown!r}, which is not a decision "
                f'({{"decision": "allow"|"allow-confined"|"deny"|"ask", "reason": "..."}}). '
                f"Check that {self.bin} is bashgate with the `hook json` command."
            )
        if decision == "allow-confined":
            # Without the fenced command line there is nothing safe to run.
            if not isinstance(command, str) or not command.strip():
                return self._error(
                    f"`{_show(argv)}` answered allow-confined without the fenced command to run "
                    f"({shown!r}). Check that {self.bin} is bashgate with the `hook json` command."
                )
            return Decision(decision, reason or "bashgate lets it run fenced", command)
        return Decision(decision, reason or f"bashgate said {decision}")

    def _error(self, message: str) -> Decision:
        log.warning("bashgate check failed, command not run: %s", message)
        return Decision("error", message)


def refusal(command: str, decision: Decision) -> str:
    """The tool output an agent sees instead of a command's output."""
    kind = decision.decision
    if kind == "deny":
        head = "bashgate denied this command, so it was not run."
    elif kind == "ask":
        head = (
            "bashgate wants a person to approve this command, and no approval is available "
            "here (no approval callback), so it was not run."
        )
    elif kind == "declined":
        head = "bashgate asked for approval of this command and it was not approved, so it was not run."
    elif kind == "error":
        head = "bashgate could not check this command, so it was not run (bashgate fails closed)."
    else:
        head = f"bashgate did not allow this command ({kind}), so it was not run."
    label = "error" if kind == "error" else "reason"
    return f"{head}\ncommand: {command}\n{label}: {decision.reason}"


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _show(argv: Sequence[str]) -> str:
    return " ".join(argv)
