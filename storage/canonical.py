"""RFC 8785 (JCS) canonical JSON: what audit hashes and call fingerprints are taken over.

Most values are JSON without floats, with safe integers and ASCII keys: for those, RFC 8785
is exactly sorted, compact ``json.dumps`` with non-ASCII kept (the same escapes, the same key
order), several times faster than the general serializer, which every other value goes
through (floats, big integers, non-ASCII keys, lone surrogates). The audit chain hashes
every decision, so this sits on the approval cycle's hot path.
"""

from __future__ import annotations

import json
from typing import Any

_SAFE_INT = 2**53
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def canonical(value: Any) -> bytes:
    """The RFC 8785 canonical JSON of ``value``, as UTF-8."""
    if is_plain(value):
        return _dumps(value).encode("utf-8")
    import rfc8785  # the general case: loaded when first needed

    return rfc8785.dumps(value)


def is_plain(value: Any) -> bool:
    """``value`` is JSON on which sorted compact ``json.dumps`` is RFC 8785 byte for byte."""
    t = type(value)
    if t is str:
        return value.isascii() or not _has_surrogate(value)
    if t is bool or value is None:
        return True
    if t is int:
        return -_SAFE_INT < value < _SAFE_INT
    if t is dict:
        return all(type(k) is str and k.isascii() and is_plain(v) for k, v in value.items())
    if t is list:
        return all(is_plain(v) for v in value)
    return False


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in s)
