"""Random ids and lease tokens, made without ``uuid.UUID`` objects.

``str(uuid.uuid4())`` builds a ``UUID`` (an ``int`` from the bytes, range and version checks, then
formatting back to text) only for its text; a warm approval cycle makes two (the run id, the lease
owner token). These read the same 16 random bytes (``os.urandom``, as ``uuid4`` does) and format them
directly: the same text, at a fraction of the cost.
"""

from __future__ import annotations

import os

_urandom = os.urandom


def new_run_id() -> str:
    """A random (version 4) UUID in its canonical text form, as ``str(uuid.uuid4())``."""
    b = bytearray(_urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_token() -> str:
    """128 random bits as 32 hex characters (a lease owner token: unique, never parsed)."""
    return _urandom(16).hex()
