"""The browser UI's sessions: a signed cookie naming the token's identity, and CSRF tokens.

Signing in checks an API token once (``warden_server.tokens``); the cookie then
carries only ``{session id, token name, role, expiry}`` and an HMAC over them
with a key that never leaves the server process (a restart signs everyone
out; signing out revokes the session in this process). The cookie is
HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it)
and Secure over HTTPS. Every POST also carries a CSRF token: an HMAC of the
session id, so a page of this server is the only place one comes from.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from warden_server.tokens import ROLES, Identity, Role

SESSION_COOKIE = "warden_session"
#: how long a sign-in lasts.
SESSION_SECONDS = 8 * 3600


@dataclass(frozen=True)
class Session:
    sid: str
    #: the token's name (the actor of decisions); None when the server has no tokens (loopback, no auth).
    name: str | None
    role: Role
    expires_at: int

    def allows(self, role: Role) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class SessionKeeper:
    """Issues and reads session cookies and CSRF tokens with one secret key."""

    def __init__(self, key: bytes | None = None, *, lifetime: int = SESSION_SECONDS) -> None:
        self._key = key or secrets.token_bytes(32)
        self.lifetime = lifetime
        #: sessions signed out before their expiry (session id -> expiry), forgotten once expired.
        self._revoked: dict[str, int] = {}

    def _mac(self, label: str, data: str) -> str:
        return _b64(hmac.new(self._key, f"{label}|{data}".encode(), hashlib.sha256).digest())

    def issue(self, identity: Identity | None) -> tuple[Session, str]:
        """A new session for ``identity`` (None: the no-auth operator) and its cookie value."""
        role: Role = identity.role if identity is not None else "admin"
        name = identity.name if identity is not None else None
        session = Session(secrets.token_urlsafe(16), name, role, int(time.time()) + self.lifetime)
        doc = {"s": session.sid, "n": session.name, "r": session.role, "x": session.expires_at}
        payload = _b64(json.dumps(doc, separators=(",", ":")).encode())
        return session, f"{payload}.{self._mac('session', payload)}"

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie names, if this server signed it and it has not expired."""
        if not cookie or not cookie.isascii():
            return None
        payload, dot, mac = cookie.partition(".")
        if not dot or not hmac.compare_digest(self._mac("session", payload), mac):
            return None
        try:
            doc = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            session = Session(str(doc["s"]), doc["n"], doc["r"], int(doc["x"]))
        except (ValueError, KeyError, TypeError):
            return None
        if session.role not in ROLES or session.expires_at <= time.time() or session.sid in self._revoked:
            return None
        return session

    def revoke(self, session: Session) -> None:
        """Sign ``session`` out: its cookie, even if kept or copied, is refused from now on."""
        now = time.time()
        self._revoked = {sid: exp for sid, exp in self._revoked.items() if exp > now}
        self._revoked[session.sid] = session.expires_at

    def csrf(self, session: Session) -> str:
        return self._mac("csrf", session.sid)

    def check_csrf(self, session: Session, token: str | None) -> bool:
        if not token or not token.isascii():
            return False
        return hmac.compare_digest(self.csrf(session), token)


__all__ = ["SESSION_COOKIE", "SESSION_SECONDS", "Session", "SessionKeeper"]
