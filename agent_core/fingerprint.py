"""Fingerprints bind an approval to the exact tool name and arguments the operator saw."""

from __future__ import annotations

import hashlib
from typing import Any

from storage.canonical import canonical


def fingerprint(tool_name: str, args: Any) -> str:
    """``"sha256:" + hex(sha256(JCS({"args": args, "tool": tool_name})))``.

    JCS is RFC 8785 canonical JSON, so a client in any language computes the
    same string from the arguments exactly as the model sent them.
    """
    return "sha256:" + hashlib.sha256(canonical({"args": args, "tool": tool_name})).hexdigest()
