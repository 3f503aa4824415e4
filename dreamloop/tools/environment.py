"""The environment a command runs with: the kit's own credentials taken out.

Bash (and, later, command hooks) run programs the model asked for. Those
programs get the user's environment, except the credentials this kit talks
to the API with: a model running ``env`` must not copy the API key into the
transcript, the trace or ``--json`` output. It knows nothing about which
command runs or who allowed it.

A process's first environment stays readable for its life (``/proc/PID/environ``, by any process of the
same user), whatever ``os.environ`` says later. So ``dreamloop run --live`` starts again without the
credentials in its environment (``hand_off_credentials``: they go through a pipe to the new program,
``take_credentials`` reads them into ``os.environ``, which only this process's memory holds).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Iterable, Mapping

__all__ = ["CREDENTIAL_VARIABLES", "REDACTED", "command_environment", "hand_off_credentials", "known_credentials",
           "redact", "take_credentials"]

HAND_OFF = "DREAMLOOP_CREDENTIALS_FD"
"""The variable naming the pipe the credentials come through after ``hand_off_credentials``."""

_handed_off = False  # this process was started by hand_off_credentials (it never hands off again)

REDACTED = "[redacted: a credential of this kit]"
"""What a known credential becomes in text that enters the history, a trace, a transcript or a record."""

CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""Variables the SDK reads credentials from; never passed to a command unless asked for."""


def command_environment(secrets: Iterable[str] = (), *, pass_credentials: bool = False,
                        base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) without the kit's credentials, for a command to run with.

    Removes ``CREDENTIAL_VARIABLES`` and every variable whose value is one of
    ``secrets`` (the key the model was built with, whatever variable it came
    through). ``pass_credentials=True`` is the documented opt-in: the
    environment is passed whole. Returns a new dict.

    Example::

        env = command_environment(context.secrets)    # what BashTool runs with
        subprocess.run(["env"], env=env)               # no ANTHROPIC_API_KEY here
    """
    environment = dict(os.environ if base is None else base)
    if pass_credentials:
        return environment
    hidden = set(known_credentials(secrets))  # the key under any other variable name, too
    return {name: value for name, value in environment.items()
            if name not in CREDENTIAL_VARIABLES and value not in hidden}


def known_credentials(secrets: Iterable[str] = ()) -> list[str]:
    """``secrets`` plus the values of ``CREDENTIAL_VARIABLES`` in this process's environment (the key
    ``dreamloop run`` talks to the API with), longest first; values under 8 characters are not secrets."""
    found = {s for s in secrets if s} | {os.environ.get(name, "") for name in CREDENTIAL_VARIABLES}
    return sorted((s for s in found if len(s) >= 8), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known credential (``known_credentials(secrets)``) replaced by ``REDACTED``.

    For whatever a command or a hook printed before it enters the history: a command can read the key
    from places its environment does not control (``/proc/$PPID/environ``, a file).
    """
    for secret in known_credentials(secrets):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def hand_off_credentials() -> None:
    """Start this program again (the same ``sys.orig_argv``, the same process id) with the kit's credentials,
    and every variable holding one, moved out of its environment into a pipe the new program reads.

    Returns without doing anything where there is nothing to move, where the program has already been
    started this way, or where the system cannot (not POSIX); otherwise it does not return.
    """
    if os.name != "posix" or _handed_off or HAND_OFF in os.environ:
        return
    secrets = set(known_credentials())
    moved = {name: value for name, value in os.environ.items() if name in CREDENTIAL_VARIABLES or value in secrets}
    if not moved:
        return
    read, write = os.pipe()
    data = json.dumps(moved).encode("utf-8")
    if len(data) > 60_000:  # more than a pipe holds without a reader: leave the environment as it is
        os.close(read)
        os.close(write)
        return
    os.write(write, data)
    os.close(write)
    os.set_inheritable(read, True)
    environment = {name: value for name, value in os.environ.items() if name not in moved}
    environment[HAND_OFF] = str(read)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, list(sys.orig_argv), environment)


def take_credentials() -> None:
    """After ``hand_off_credentials``: read the credentials from the pipe into ``os.environ`` (this process's
    memory, not its first environment) and forget the pipe. Does nothing when the program was started
    plainly."""
    global _handed_off
    fd = os.environ.pop(HAND_OFF, None)
    if fd is None:
        return
    _handed_off = True
    chunks = []
    with os.fdopen(int(fd), "rb") as pipe:
        while chunk := pipe.read(65_536):
            chunks.append(chunk)
    os.environ.update(json.loads(b"".join(chunks).decode("utf-8")))
