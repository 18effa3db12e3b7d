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
#: JSON string escaping with non-ASCII kept: what ``_dumps`` does to a ``str``, without its checks.
_string: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


def canonical(value: Any) -> bytes:
    """The RFC 8785 canonical JSON of ``value``, as UTF-8."""
    t = type(value)
    # The scalars of an audit entry first (ten per entry, on every decision): no type dispatch.
    if t is str:
        if value.isascii() or not _has_surrogate(value):
            return _string(value).encode("utf-8")
    elif value is None:
        return b"null"
    elif t is float:
        text = _float(value)
        if text is not None:
            return text
    elif is_plain(value):
        return _dumps(value).encode("utf-8")
    import rfc8785  # the general case: loaded when first needed

    return rfc8785.dumps(value)


def _float(f: float) -> bytes | None:
    """ECMAScript's Number-to-String of ``f`` (RFC 8785 3.2.2.3) where Python's ``repr`` has no
    exponent (1e-4 <= |f| < 1e16: timestamps, amounts): the same shortest round-trip digits,
    without a trailing ``.0``; None elsewhere (exponents, NaN, infinities: the general serializer)."""
    if f == 0:
        return b"0"  # -0 too
    text = repr(f)
    if "e" in text or "n" in text:  # 1e+16, 1e-05, inf, nan
        return None
    return (text[:-2] if text.endswith(".0") else text).encode()


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
