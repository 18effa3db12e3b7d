"""Named API tokens with roles: ``warden serve --tokens-file FILE``, ``warden tokens add``.

The file is JSON: ``{"tokens": [{"name", "role", "sha256"}]}``. Only the
SHA-256 of each secret is stored (the secrets are 256-bit random values, so a
plain hash is enough: no password stretching needed); a presented token is
hashed and compared with every entry in constant time. Roles, each including
the one before:

- ``viewer``: list and show pending runs, stream events, read the audit trail;
- ``approver``: also decide calls and start runs;
- ``admin``: also grants and tokens.

``--token`` / ``WARDEN_API_TOKEN`` is one ``admin`` token named ``api-token``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Role = Literal["viewer", "approver", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "approver", "admin")
#: the name decisions made with ``--token`` are recorded under.
SINGLE_TOKEN_NAME = "api-token"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class TokenFileError(ValueError):
    """The tokens file cannot be read or has a bad entry."""


@dataclass(frozen=True)
class Identity:
    name: str
    role: Role

    def allows(self, role: Role) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


@functools.lru_cache(maxsize=256)
def _identity(name: str, role: Role) -> Identity:
    """One (immutable) ``Identity`` per token entry, not one built per request."""
    return Identity(name, role)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenSet:
    """The tokens a server accepts: ``lookup(secret)`` -> the ``Identity``, or None."""

    def __init__(self, entries: list[tuple[str, Role, str]]) -> None:
        self._entries = [(name, role, bytes.fromhex(h)) for name, role, h in entries]

    @classmethod
    def single(cls, token: str) -> TokenSet:
        return cls([(SINGLE_TOKEN_NAME, "admin", digest(token))])

    def lookup(self, secret: bytes) -> Identity | None:
        supplied = hashlib.sha256(secret).digest()
        found: Identity | None = None
        for name, role, expected in self._entries:  # every entry compared: time independent of which matched
            if hmac.compare_digest(supplied, expected) and found is None:
                found = _identity(name, role)
        return found

    def __len__(self) -> int:
        return len(self._entries)

    def merged(self, other: TokenSet) -> TokenSet:
        out = TokenSet([])
        out._entries = [*self._entries, *other._entries]
        return out


def _read(path: Path) -> list[dict[str, str]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise TokenFileError(f"{path}: cannot read the tokens file ({exc})") from None
    tokens = doc.get("tokens") if isinstance(doc, dict) else None
    if not isinstance(tokens, list):
        raise TokenFileError(f'{path}: expected {{"tokens": [...]}}')
    return tokens


def load_tokens(path: str | os.PathLike[str]) -> TokenSet:
    p = Path(path)
    if not p.exists():
        raise TokenFileError(f"{p}: no such tokens file (create one with `warden tokens add NAME --file {p}`)")
    entries: list[tuple[str, Role, str]] = []
    names: set[str] = set()
    for i, item in enumerate(_read(p)):
        name, role, h = (item.get(k) if isinstance(item, dict) else None for k in ("name", "role", "sha256"))
        if not isinstance(name, str) or not _NAME.match(name) or name in names:
            raise TokenFileError(f"{p}: entry {i}: a unique name of letters, digits, . _ @ - is required")
        if role not in ROLES:
            raise TokenFileError(f"{p}: token {name!r}: role must be one of {', '.join(ROLES)}, not {role!r}")
        if not isinstance(h, str) or not re.fullmatch(r"[0-9a-f]{64}", h):
            raise TokenFileError(f"{p}: token {name!r}: sha256 must be 64 lower-case hex digits")
        names.add(name)
        entries.append((name, role, h))
    if not entries:
        raise TokenFileError(f"{p}: the tokens file has no tokens")
    return TokenSet(entries)


def add_token(path: str | os.PathLike[str], name: str, role: Role) -> str:
    """Add (or replace) token ``name`` in the file; the new secret, to show once."""
    if not _NAME.match(name):
        raise TokenFileError(f"token name {name!r}: use letters, digits, . _ @ - (up to 64)")
    if role not in ROLES:
        raise TokenFileError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    p = Path(path)
    tokens = [t for t in _read(p) if not (isinstance(t, dict) and t.get("name") == name)]
    secret = "wdn_" + secrets.token_urlsafe(32)
    tokens.append({"name": name, "role": role, "sha256": digest(secret)})
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"tokens": tokens}, f, indent=2)
        f.write("\n")
    os.replace(tmp, p)
    return secret
