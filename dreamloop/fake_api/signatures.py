"""Thinking-block signatures issued by the offline API.

The real API signs every ``thinking`` block and rejects a replayed block that
"differs in any way from what was originally returned". The fake API does the
same with a deterministic HMAC of the thinking text under a fixed, public key
(this is a teaching fake, not a security boundary). Signatures it did not
issue (recorded sessions, other servers) are accepted as they are.
This module knows nothing about HTTP or requests.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

__all__ = ["is_issued", "sign_thinking", "verify_thinking"]

_KEY = b"dreamloop-fake-api/thinking-signature/v1"
_MARK = b"dreamloop-fake:"  # 15 bytes, so the base64 text of every issued signature starts the same way


def sign_thinking(thinking: str) -> str:
    """The signature the fake API gives a thinking block with text ``thinking`` (base64 str)."""
    digest = hmac.new(_KEY, thinking.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(_MARK + digest).decode("ascii")


def _decoded(signature: str) -> bytes | None:
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None


def is_issued(signature: object) -> bool:
    """True if ``signature`` looks like one the fake API issued (whether or not it still matches)."""
    if not isinstance(signature, str):
        return False
    raw = _decoded(signature)
    return raw is not None and raw.startswith(_MARK)


def verify_thinking(thinking: object, signature: object) -> bool:
    """True unless ``signature`` was issued by the fake API for a different text.

    Foreign signatures (not issued here) always pass: the fake API cannot check them.
    """
    if not is_issued(signature):
        return True
    return isinstance(thinking, str) and hmac.compare_digest(sign_thinking(thinking), str(signature))
