"""The environment a command runs with: the kit's own credentials taken out.

Bash (and, later, command hooks) run programs the model asked for. Those
programs get the user's environment, except the credentials this kit talks
to the API with: a model running ``env`` must not copy the API key into the
transcript, the trace or ``--json`` output. It knows nothing about which
command runs or who allowed it.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping

__all__ = ["CREDENTIAL_VARIABLES", "REDACTED", "command_environment", "known_credentials", "redact"]

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
