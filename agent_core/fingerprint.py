"""Fingerprints bind an approval to the exact tool name and arguments the operator saw."""

from __future__ import annotations

import hashlib
import json
from typing import Any

_SAFE_INT = 2**53


def fingerprint(tool_name: str, args: Any) -> str:
    """``"sha256:" + hex(sha256(JCS({"args": args, "tool": tool_name})))``.

    JCS is RFC 8785 canonical JSON, so a client in any language computes the
    same string from the arguments exactly as the model sent them.
    """
    doc = {"args": args, "tool": tool_name}
    if _plain(doc):
        # For JSON without floats, with safe integers and ASCII keys, RFC 8785 is
        # exactly sorted, compact json.dumps (same escapes, same key order), and
        # several times faster than the general implementation.
        canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    else:  # imported here: most arguments never need it, and the console's first frame imports this module
        import rfc8785

        canonical = rfc8785.dumps(doc)
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def _plain(value: Any) -> bool:
    t = type(value)
    if t is str or t is bool or value is None:
        return t is not str or not _has_surrogate(value)
    if t is int:
        return -_SAFE_INT < value < _SAFE_INT
    if t is dict:
        return all(type(k) is str and k.isascii() and _plain(v) for k, v in value.items())
    if t is list:
        return all(_plain(v) for v in value)
    return False


def _has_surrogate(s: str) -> bool:
    if s.isascii():
        return False
    return any("\ud800" <= ch <= "\udfff" for ch in s)
