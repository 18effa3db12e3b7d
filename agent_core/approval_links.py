"""Signed approval links: a notification's ``links = {view, approve, decline}``.

A link is ``{public_url}/ui/links/{token}``; the token is
``base64url(claims) "." base64url(HMAC-SHA256(key, base64url(claims)))`` where
the claims bind the action, the run, the call and the fingerprint the operator
was told about, and an expiry (the call's deadline, and never more than 24 h
away). The key is derived from the webhook secret, so whoever can verify a
webhook's signature cannot forge links from it, and a server without that
secret cannot mint any.

Verifying a token only says it was issued by this secret and has not expired.
Whether it still decides anything (the call pending, the same fingerprint, the
link not used yet) is the store's answer at decision time: the decision is a
compare-and-set on the call, so a link decides at most once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from agent_core.errors import WardenError

LinkAction = Literal["view", "approve", "decline"]
ACTIONS: tuple[LinkAction, ...] = ("view", "approve", "decline")
#: the longest a link lives, whatever the call's deadline.
MAX_AGE_SECONDS = 24 * 3600
#: the actor of decisions taken through a link (``--link-actor`` names another).
LINK_ACTOR = "approval-link"
#: where links point, under the public URL.
LINK_PATH = "/ui/links/"
_KEY_LABEL = b"warden approval links v1"


class LinkInvalid(WardenError):
    """The token was not issued by this server's secret, or was altered (403)."""

    code = "APPROVAL_LINK_INVALID"


class LinkExpired(WardenError):
    """The link's time is over: the call's deadline passed, or it is older than 24 h (410)."""

    code = "APPROVAL_LINK_EXPIRED"


class LinkSpent(WardenError):
    """The link decides nothing any more: used, the call decided, or its arguments changed (409)."""

    code = "APPROVAL_LINK_SPENT"


@dataclass(frozen=True)
class LinkClaims:
    action: LinkAction
    run_id: str
    tool_call_id: str
    fingerprint: str
    expires_at: int

    def to_json(self) -> dict[str, Any]:
        return {"a": self.action, "r": self.run_id, "c": self.tool_call_id, "f": self.fingerprint, "x": self.expires_at}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class LinkSigner:
    """Issues and checks approval links for one server (``public_url``) and one secret."""

    def __init__(self, secret: str, public_url: str, *, max_age: int = MAX_AGE_SECONDS) -> None:
        if not secret:
            raise ValueError("approval links need a secret (the webhook secret)")
        self._key = hmac.new(secret.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest()
        self.public_url = public_url.rstrip("/")
        self.max_age = max_age

    def _mac(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).digest())

    def token(
        self,
        action: LinkAction,
        run_id: str,
        tool_call_id: str,
        fingerprint: str,
        *,
        deadline: float | None = None,
        now: float | None = None,
    ) -> str:
        now = time.time() if now is None else now
        expires = now + self.max_age if deadline is None else min(deadline, now + self.max_age)
        claims = LinkClaims(action, run_id, tool_call_id, fingerprint, int(expires))
        payload = _b64(json.dumps(claims.to_json(), separators=(",", ":"), ensure_ascii=True).encode("ascii"))
        return f"{payload}.{self._mac(payload)}"

    def links(
        self, run_id: str, tool_call_id: str, fingerprint: str, *, deadline: float | None = None
    ) -> dict[str, str]:
        """``{view, approve, decline}``: the three links of one pending call."""
        now = time.time()
        return {
            action: self.public_url
            + LINK_PATH
            + self.token(action, run_id, tool_call_id, fingerprint, deadline=deadline, now=now)
            for action in ACTIONS
        }

    def verify(self, token: str, *, now: float | None = None) -> LinkClaims:
        """The claims of a token this signer issued; ``LinkInvalid`` when altered, ``LinkExpired`` when late."""
        payload, dot, mac = token.partition(".")
        if not token.isascii() or not dot or not payload or not hmac.compare_digest(self._mac(payload), mac):
            raise LinkInvalid("this link is not valid: it was altered, or not issued by this server")
        try:
            data = json.loads(_unb64(payload))
            claims = LinkClaims(data["a"], str(data["r"]), str(data["c"]), str(data["f"]), int(data["x"]))
        except (ValueError, KeyError, TypeError):  # signed but unreadable: never from this code
            raise LinkInvalid("this link is not valid: its content cannot be read") from None
        if claims.action not in ACTIONS:
            raise LinkInvalid("this link is not valid: unknown action")
        if (time.time() if now is None else now) >= claims.expires_at:
            raise LinkExpired("this link has expired: the call's deadline passed, or the link is over 24 hours old")
        return claims

    def for_notice(self, notice: Any) -> dict[str, str] | None:
        """The links of a ``PendingNotice`` (a webhook body's ``links``); None for a call no link decides
        (an input request needs its form; an interrupted call, recovery)."""
        if notice.kind != "approval":
            return None
        deadline = notice.expires_at.timestamp() if notice.expires_at is not None else None
        return self.links(notice.run_id, notice.tool_call_id, notice.fingerprint, deadline=deadline)


__all__ = [
    "ACTIONS",
    "LINK_ACTOR",
    "LINK_PATH",
    "MAX_AGE_SECONDS",
    "LinkAction",
    "LinkClaims",
    "LinkExpired",
    "LinkInvalid",
    "LinkSigner",
    "LinkSpent",
]
